/**
 * The pending_departments rows of a request: who can decide on it now. Read from the contract
 * (`pendingDepartmentsOf` at the event's block) rather than worked out from the decisions, so the SEQUENTIAL
 * "whose turn is it" rule lives in StageLedger alone (docs/decisions.md, "Who can decide now").
 */
import { decodeFunctionResult, encodeFunctionData, toHex, type Hex } from "viem";
import type { Context } from "ponder:registry";
import { pendingDepartments, requestProgress } from "ponder:schema";
import { ApprovalRegistryAbi } from "../../abis/index.ts";
import type { LogEvent } from "./record";

// The set at the end of a block is the same for every event of that block: one call per (block, request).
// Keyed by block hash, so a reorganised block is read again. Bounded: the oldest entries go first.
const readAt = new Map<string, Promise<readonly number[]>>();
const READ_MEMO = 512;
const RPC_URL = process.env.CHAIN_RPC_URL!;

async function readPending(context: Context, event: LogEvent, tokenId: bigint): Promise<readonly number[]> {
  const call = {
    abi: ApprovalRegistryAbi,
    address: context.contracts.ApprovalRegistry.address as `0x${string}`,
    functionName: "pendingDepartmentsOf",
    args: [tokenId],
  } as const;
  const atBlock = await callOnce(call.address, encodeFunctionData(call), event.block.number);
  if (atBlock !== undefined)
    return decodeFunctionResult({ abi: ApprovalRegistryAbi, functionName: call.functionName, data: atBlock }).map(
      Number,
    );
  // A node without that block's state (anvil restored from its state file, Besu past its retained layers):
  // the latest state. Rows written while re-indexing old blocks are then ahead of their block, and right once the
  // index has caught up.
  return (await context.client.readContract({ ...call, cache: "immutable" })).map(Number);
}

/**
 * One eth_call at `block`, straight to the node and not retried: undefined when the node has no state for the
 * block. (Through Ponder's client a refused call is retried with back-off for about a minute, which made
 * re-indexing a chain restored from its state file crawl.)
 */
async function callOnce(to: `0x${string}`, data: Hex, block: bigint): Promise<Hex | undefined> {
  try {
    const response = await fetch(RPC_URL, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_call", params: [{ to, data }, toHex(block)] }),
    });
    const answer = (await response.json()) as { result?: Hex };
    return typeof answer.result === "string" ? answer.result : undefined;
  } catch {
    return undefined;
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
  const progress = await context.db.find(requestProgress, { tokenId });
  if (!progress) return; // no review started: nobody can decide
  const { stage, pendingDepartmentIds: before, pendingStage } = progress;
  const now = new Set(await pendingAt(context, event, tokenId));
  // A department still pending in the same stage keeps its row (and the block it has been pending since).
  const kept = new Set(pendingStage === stage ? before.filter((id) => now.has(id)) : []);
  for (const departmentId of before) {
    if (!kept.has(departmentId)) await context.db.delete(pendingDepartments, { id: `${tokenId}-${departmentId}` });
  }
  for (const departmentId of now) {
    if (kept.has(departmentId)) continue;
    await context.db
      .insert(pendingDepartments)
      .values({ id: `${tokenId}-${departmentId}`, tokenId, departmentId, stage, sinceBlock: event.block.number });
  }
  await context.db.update(requestProgress, { tokenId }).set({ pendingDepartmentIds: [...now], pendingStage: stage });
}
