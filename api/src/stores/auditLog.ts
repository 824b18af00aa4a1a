/**
 * The audit trail: one row per state change, written with the same database client (so in the same transaction)
 * as the change itself. Use cases receive the caller's `RequestMeta` (plain data; routes build it from the
 * request with http/requestMeta.ts).
 */
import { randomUUID } from "node:crypto";
import type { Principal } from "../auth/principal.ts";
import type { RecordedTx, SendOptions } from "../chain/chainGateway.ts";
import type { Db, Tx } from "../db/queryable.ts";
import { isAdmin } from "../auth/principal.ts";
import { insertRow } from "./insertRow.ts";

export type AuditEntity =
  "REQUEST" | "APPROVAL" | "DOCUMENT" | "DEPARTMENT" | "WORKFLOW" | "CLIENT" | "WEBHOOK" | "APPLICANT" | "REVIEWER";

/** Who made a change and from where. */
export interface RequestMeta {
  principal?: Principal;
  /** A caller who is nobody yet (a failed sign-in): recorded as ANONYMOUS rather than as the platform. */
  anonymous?: true;
  ip?: string;
  userAgent?: string;
  requestId?: string;
}

export const SYSTEM: RequestMeta = {};

export interface AuditEntry {
  entityType: AuditEntity;
  entityId: string;
  action: string;
  oldValue?: unknown;
  newValue?: unknown;
  txHash?: string;
}

function actorOf(principal: Principal | undefined, anonymous?: true): { type: string; id: string } {
  if (!principal) return anonymous ? { type: "ANONYMOUS", id: "unauthenticated" } : { type: "SYSTEM", id: "platform" };
  if (principal.kind === "applicant") return { type: "APPLICANT", id: principal.id };
  // A reviewer signed in to the console acts for the department, and the log names the person.
  if (principal.kind === "department")
    return principal.reviewerId
      ? { type: "REVIEWER", id: principal.reviewerId }
      : { type: "DEPARTMENT", id: principal.code };
  return { type: isAdmin(principal) ? "ADMIN" : "CLIENT", id: principal.id };
}

export async function audit(client: Db, meta: RequestMeta, entry: AuditEntry): Promise<void> {
  const actor = actorOf(meta.principal, meta.anonymous);
  await insertRow(client, "audit_logs", {
    id: randomUUID(),
    entityType: entry.entityType,
    entityId: entry.entityId,
    action: entry.action,
    actorType: actor.type,
    actorId: actor.id,
    oldValue: entry.oldValue === undefined ? null : JSON.stringify(entry.oldValue),
    newValue: entry.newValue === undefined ? null : JSON.stringify(entry.newValue),
    ipAddress: meta.ip ?? null,
    userAgent: meta.userAgent ?? null,
    requestId: meta.requestId ?? null,
    txHash: entry.txHash ?? null,
  });
}

/**
 * The send options of a chain write that is audited: `record`'s rows (if any), then the audit row of `entry` with
 * the transaction's hash, in the outbox record's database transaction.
 */
export function audited(
  meta: RequestMeta,
  entry: Omit<AuditEntry, "txHash">,
  record?: (client: Tx, recorded: RecordedTx) => Promise<unknown>,
): SendOptions {
  return {
    onRecorded: async (client, recorded) => {
      await record?.(client, recorded);
      await audit(client, meta, { ...entry, txHash: recorded.hash });
    },
  };
}
