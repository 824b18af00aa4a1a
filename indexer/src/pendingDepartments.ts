/**
 * The pending_departments rows of a request: who can decide on it now. Read from the contract
 * (`pendingDepartmentsOf` at the event's block) rather than worked out from the decisions, so the SEQUENTIAL
 * "whose turn is it" rule lives in StageLedger alone (docs/decisions.md, "Who can decide now").
 */
import { eq } from "ponder";
import type { Context } from "ponder:registry";
import { pendingDepartments, requestProgress } from "ponder:schema";
import { ApprovalRegistryAbi } from "../../abis/index.ts";
import type { LogEvent } from "./record";

// The set at the end of a block is the same for every event of that block: one call per (block, request).
// Keyed by block hash, so a reorganised block is read again. Bounded: the oldest entries go first.
const readAt = new Map<string, Promise<readonly number[]>>();
const READ_MEMO = 512;

async function readPending(context: Context, event: LogEvent, tokenId: bigint): Promise<readonly number[]> {
  const call = {
    abi: ApprovalRegistryAbi,
    address: context.contracts.ApprovalRegistry.address as `0x${string}`,
    functionName: "pendingDepartmentsOf",
    args: [tokenId],
  } as const;
  try {
    // No retries (Ponder's are ~1 min of back-off for an unknown block): the fallback below answers at once.
    return (
      await context.client.readContract({ ...call, blockNumber: event.block.number, retryEmptyResponse: false })
    ).map(Number);
  } catch {
    // A node without that block's state (anvil restored from its state file, Besu past its retained layers):
    // the latest state. Rows written while re-indexing old blocks are then ahead of their block, and right
    // once the index has caught up.
    return (await context.client.readContract({ ...call, cache: "immutable" })).map(Number);
  }
}

function pendingAt(context: Context, event: LogEvent, tokenId: bigint): Promise<readonly number[]> {
  const key = `${event.block.hash}:${tokenId}`;
  let found = readAt.get(key);
  if (!found) {
    found = readPending(context, event, tokenId);
    readAt.set(key, found);
    found.catch(() => readAt.delete(key));
    if (readAt.size > READ_MEMO) readAt.delete(readAt.keys().next().value!);
  }
  return found;
}

/** Rewrites the request's pending_departments rows from the contract's answer at the event's block. */
export async function refreshPending(context: Context, event: LogEvent, tokenId: bigint): Promise<void> {
  const ids = new Set(await pendingAt(context, event, tokenId));
  const stage = (await context.db.find(requestProgress, { tokenId }))?.stage ?? 0;
  const rows = await context.db.sql.select().from(pendingDepartments).where(eq(pendingDepartments.tokenId, tokenId));
  for (const row of rows) {
    if (ids.has(row.departmentId) && row.stage === stage) ids.delete(row.departmentId);
    else await context.db.delete(pendingDepartments, { id: row.id });
  }
  for (const departmentId of ids) {
    await context.db
      .insert(pendingDepartments)
      .values({ id: `${tokenId}-${departmentId}`, tokenId, departmentId, stage, sinceBlock: event.block.number });
  }
}
