/**
 * The audit trail: one row per state change, written with the same database client (so in the same transaction)
 * as the change itself. Use cases receive the caller's `RequestMeta` (plain data; routes build it from the
 * request with http/requestMeta.ts).
 */
import { randomUUID } from "node:crypto";
import type { Principal } from "../auth/principal.ts";
import { isAdmin } from "../auth/principal.ts";

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

export async function audit(
  client: { query: (sql: string, params: unknown[]) => Promise<unknown> },
  meta: RequestMeta,
  entry: AuditEntry,
): Promise<void> {
  const actor = actorOf(meta.principal, meta.anonymous);
  await client.query(
    `INSERT INTO audit_logs (id, entity_type, entity_id, action, actor_type, actor_id, old_value, new_value, ip_address, user_agent, request_id, tx_hash)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
    [
      randomUUID(),
      entry.entityType,
      entry.entityId,
      entry.action,
      actor.type,
      actor.id,
      entry.oldValue === undefined ? null : JSON.stringify(entry.oldValue),
      entry.newValue === undefined ? null : JSON.stringify(entry.newValue),
      meta.ip ?? null,
      meta.userAgent ?? null,
      meta.requestId ?? null,
      entry.txHash ?? null,
    ],
  );
}
