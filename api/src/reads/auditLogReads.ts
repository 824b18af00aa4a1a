/**
 * The audit trail (`audit_logs`, append-only) as administrators read it: filtered, newest first, paginated.
 * Entity and actor ids are text, not UUIDs: departments are audited under their code, clients under their client
 * id, applicants under their identity-locker id.
 */
import type pg from "pg";
import type { AuditEntity } from "../stores/auditLog.ts";

/** The spec's five entity types, then ours (the table's CHECK constraint lists the same). */
export const AUDIT_ENTITY_TYPES = [
  "REQUEST",
  "APPROVAL",
  "DOCUMENT",
  "DEPARTMENT",
  "WORKFLOW",
  "CLIENT",
  "WEBHOOK",
  "APPLICANT",
  "REVIEWER",
] as const satisfies readonly AuditEntity[];
const everyEntityListed: Exclude<AuditEntity, (typeof AUDIT_ENTITY_TYPES)[number]> extends never ? true : never = true;
void everyEntityListed;

/** Who acted (auditLog.ts actorOf): SYSTEM is the platform itself (jobs, keeper). */
export const AUDIT_ACTOR_TYPES = ["APPLICANT", "CLIENT", "DEPARTMENT", "REVIEWER", "ADMIN", "SYSTEM"] as const;

export interface AuditLogQuery {
  entityType?: AuditEntity;
  entityId?: string;
  action?: string;
  actorType?: (typeof AUDIT_ACTOR_TYPES)[number];
  actorId?: string;
  /** ISO date-times, both inclusive (to the millisecond the API shows). */
  startDate?: string;
  endDate?: string;
  page: number;
  limit: number;
}

export interface AuditLogView {
  logId: string;
  entityType: AuditEntity;
  entityId: string;
  action: string;
  actorType: string;
  actorId: string;
  oldValue: Record<string, unknown> | null;
  newValue: Record<string, unknown> | null;
  ipAddress: string | null;
  userAgent: string | null;
  requestId: string | null;
  transactionHash: string | null;
  createdAt: string;
}

export async function listAuditLogs(pool: Pick<pg.Pool, "query">, query: AuditLogQuery) {
  const where: string[] = [];
  const params: unknown[] = [];
  const add = (sql: string, value: unknown) => where.push(sql.replace("?", `$${params.push(value)}`));
  // Indexes: (entity_type, entity_id, created_at DESC), (actor_id, created_at DESC), (created_at DESC).
  if (query.entityType) add("entity_type = ?", query.entityType);
  if (query.entityId) add("entity_id = ?", query.entityId);
  if (query.action) add("action = ?", query.action);
  if (query.actorType) add("actor_type = ?", query.actorType);
  if (query.actorId) add("actor_id = ?", query.actorId);
  if (query.startDate) add("created_at >= ?::timestamptz", query.startDate);
  // Stored times have microseconds, shown ones milliseconds: an endDate copied from a log must include that log.
  if (query.endDate) add("created_at < ?::timestamptz + interval '1 millisecond'", query.endDate);
  const whereSql = where.length ? `WHERE ${where.join(" AND ")}` : "";

  const [page, count] = await Promise.all([
    pool.query(
      `SELECT id, entity_type, entity_id, action, actor_type, actor_id, old_value, new_value, ip_address, user_agent, request_id, tx_hash, created_at
       FROM audit_logs ${whereSql}
       ORDER BY created_at DESC, id DESC LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
      [...params, query.limit, (query.page - 1) * query.limit],
    ),
    pool.query(`SELECT count(*)::int AS n FROM audit_logs ${whereSql}`, params),
  ]);
  const total = count.rows[0].n as number;
  return {
    logs: page.rows.map((row): AuditLogView => ({
      logId: row.id,
      entityType: row.entity_type,
      entityId: row.entity_id,
      action: row.action,
      actorType: row.actor_type,
      actorId: row.actor_id,
      oldValue: row.old_value,
      newValue: row.new_value,
      ipAddress: row.ip_address,
      userAgent: row.user_agent,
      requestId: row.request_id,
      transactionHash: row.tx_hash,
      createdAt: row.created_at.toISOString(),
    })),
    pagination: { page: query.page, limit: query.limit, total, totalPages: Math.ceil(total / query.limit) },
  };
}
