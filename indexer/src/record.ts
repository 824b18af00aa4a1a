/**
 * Registration shared by the three handler files: every event of a contract's ABI gets one Ponder handler that
 * (1) stores the raw event in contract_events, (2) upserts its transaction in transactions, then (3) runs the
 * contract file's entity handler for that event, if any. So nothing emitted is lost even without an entity table.
 */
import type { Abi, Hex } from "viem";
import { zeroAddress } from "viem";
import { type Context, type EventNames, type IndexingFunctionArgs, ponder } from "ponder:registry";
import { contractEvents, roleGrants, transactions } from "ponder:schema";
import { LicenceTokenStatus } from "../../abis/index.ts";
import { DECISION, enumName, jsonSafe, roleName } from "./decode";

export type ContractName = "LicenceToken" | "DocumentRegistry" | "ApprovalRegistry";

type EventsOf<C extends ContractName> = Exclude<Extract<EventNames, `${C}:${string}`>, `${C}:setup`>;

/** Entity handlers of one contract, keyed by event name, with Ponder's typed arguments. */
export type Handlers<C extends ContractName> = {
  [K in EventsOf<C> as K extends `${C}:${infer E}` ? E : never]?: (args: IndexingFunctionArgs<K>) => Promise<void>;
};

/** What every log event carries, whichever contract emitted it. */
export interface LogEvent {
  args: unknown;
  log: { logIndex: number };
  block: { number: bigint; hash: Hex; timestamp: bigint };
  transaction: { hash: Hex; from: Hex; to: Hex | null; transactionIndex: number };
  transactionReceipt?: { gasUsed: bigint };
}

export type Db = Context["db"];

/** `${txHash}-${logIndex}`: the id of every per-event row. */
export const eventId = (event: LogEvent) => `${event.transaction.hash}-${event.log.logIndex}`;

/** Registers one handler for every event of `abi` (Ponder only fetches the events that have a handler). */
export function register<C extends ContractName>(contract: C, abi: Abi, handlers: NoInfer<Handlers<C>>): void {
  const entity = handlers as Record<string, ((args: any) => Promise<void>) | undefined>;
  const events = abi.filter((item) => item.type === "event").map((item) => item.name);
  for (const name of Object.keys(entity)) {
    if (!events.includes(name)) throw new Error(`${contract} has no event ${name}`);
  }
  for (const name of events) {
    const handler = entity[name];
    ponder.on(`${contract}:${name}` as EventNames, async (args: any) => {
      await recordEvent(args.context.db, contract, name, args.event);
      if (handler) await handler(args);
    });
  }
}

async function recordEvent(db: Db, contract: ContractName, name: string, event: LogEvent): Promise<void> {
  await db.insert(contractEvents).values({
    id: eventId(event),
    contract,
    eventName: name,
    args: jsonSafe(event.args),
    blockNumber: event.block.number,
    txHash: event.transaction.hash,
    logIndex: event.log.logIndex,
    timestamp: event.block.timestamp,
  });

  const kind = kindOf(contract, name, event.args as Record<string, unknown>);
  const hash = event.transaction.hash;
  const existing = await db.find(transactions, { hash });
  if (!existing) {
    await db.insert(transactions).values({
      hash,
      blockNumber: event.block.number,
      blockHash: event.block.hash,
      txIndex: event.transaction.transactionIndex,
      timestamp: event.block.timestamp,
      from: event.transaction.from,
      to: event.transaction.to,
      gasUsed: event.transactionReceipt?.gasUsed ?? 0n,
      kind: kind ?? "OTHER",
    });
  } else if (existing.kind === "OTHER" && kind) {
    await db.update(transactions, { hash }).set({ kind });
  }
}

/**
 * The kind of transaction an event reveals, or null when the event says nothing about it (the transaction's kind
 * then comes from the first of its events that does; OTHER if none does).
 */
export function kindOf(contract: ContractName, name: string, args: Record<string, unknown>): string | null {
  switch (name) {
    case "RoleGranted":
    case "RoleRevoked":
    case "RoleAdminChanged":
    case "BaseURISet":
    case "ReviewRegistrySet":
    case "ApprovalRegistrySet":
      return "ADMIN";
    case "Transfer":
      return contract === "LicenceToken" && args.from === zeroAddress ? "MINT_NFT" : null;
    case "LicenceStatusChanged": {
      const from = Number(args.from);
      const to = Number(args.to);
      if (from === LicenceTokenStatus.Draft && to === LicenceTokenStatus.Submitted) return "SUBMIT";
      if (from === LicenceTokenStatus.PendingResubmission && to === LicenceTokenStatus.Submitted) return "RESUBMIT";
      if (to === LicenceTokenStatus.Cancelled) return "CANCEL";
      if (
        to === LicenceTokenStatus.Suspended ||
        to === LicenceTokenStatus.Revoked ||
        (from === LicenceTokenStatus.Suspended && to === LicenceTokenStatus.Approved)
      )
        return "REVOKE";
      return null; // decisions, issuance, timeouts: their own event comes first
    }
    case "DocumentAnchored":
      return "DOC_UPDATE";
    case "StatusListAnchored":
      return "STATUS_LIST_ANCHOR";
    case "DecisionRecorded": {
      const decision = enumName(DECISION, Number(args.decision));
      if (decision === "APPROVED") return "APPROVAL";
      if (decision === "REJECTED") return "REJECT";
      if (decision === "CHANGES_REQUESTED") return "CHANGES_REQUESTED";
      return null;
    }
    case "ReviewStarted":
      return "SUBMIT";
    case "Resubmitted":
      return "RESUBMIT";
    case "DepartmentRegistered":
      return "REGISTER_DEPARTMENT";
    case "DepartmentActiveSet":
    case "DepartmentWalletProposed":
    case "DepartmentWalletCancelled":
    case "DepartmentWalletRotated":
      return "UPDATE_DEPARTMENT";
    case "WorkflowStageRegistered":
    case "WorkflowRegistered":
      return "REGISTER_WORKFLOW";
    case "WorkflowDeactivated":
      return "DEACTIVATE_WORKFLOW";
    case "StageTimedOut":
      return "TIMEOUT";
    case "EscalationResolved":
      return "ESCALATION";
    default:
      return null;
  }
}

/** RoleGranted / RoleRevoked of any of the three contracts: current state per (contract, role, account). */
export async function recordRole(
  db: Db,
  contract: ContractName,
  granted: boolean,
  event: LogEvent & { args: { role: Hex; account: Hex } },
): Promise<void> {
  const role = event.args.role.toLowerCase() as Hex;
  const account = event.args.account.toLowerCase() as Hex;
  const row = {
    granted,
    updatedBlock: event.block.number,
    updatedTx: event.transaction.hash,
  };
  await db
    .insert(roleGrants)
    .values({ id: `${contract}-${role}-${account}`, contract, role, roleName: roleName(role), account, ...row })
    .onConflictDoUpdate(row);
}
