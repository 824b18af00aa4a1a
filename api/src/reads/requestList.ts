/** GET /requests: filters, sorting and pagination over requests joined with their on-chain state. */
import type pg from "pg";
import { isAdmin, type Principal } from "../auth/principal.ts";
import { delegatedApplicantsSql } from "../stores/delegationStore.ts";
import { readTogether } from "../db/readTogether.ts";
import {
  EFFECTIVE_STATUS_SQL,
  REQUEST_SELECT,
  STAGE_NAME_JOIN,
  STAGE_NAME_SQL,
  toRequestListItem,
} from "./requestReads.ts";

export interface ListQuery {
  status?: string;
  requestType?: string;
  applicantId?: string;
  page: number;
  limit: number;
  sortBy: "createdAt" | "updatedAt" | "status";
  sortOrder: "asc" | "desc";
}

const SORT_COLUMNS = {
  createdAt: "r.created_at",
  updatedAt: "greatest(r.updated_at, to_timestamp(l.updated_at))",
  status: EFFECTIVE_STATUS_SQL,
} as const;
/** The same keys on the page's columns (the join with the workflow keeps no order of its own). */
const OUTER_SORT_COLUMNS = { createdAt: "q.created_at", updatedAt: "q.updated_at", status: "q.status" } as const;

/**
 * The status filter on the stored column, so its index serves it; EXPIRED is APPROVED past its expiry (computed),
 * and APPROVED excludes those.
 */
function statusFilter(status: string, add: (sql: string, value: unknown) => void): void {
  const expired = "l.expires_at > 0 AND l.expires_at <= extract(epoch FROM now())";
  if (status === "EXPIRED") add(`l.status = ? AND ${expired}`, "APPROVED");
  else if (status === "APPROVED") add(`l.status = ? AND NOT (${expired})`, "APPROVED");
  else add("l.status = ?", status);
}

/**
 * Totals for pagination, kept per filter until the index moves (a request only appears or changes status through
 * the index); a filter on APPROVED or EXPIRED also depends on the time (expiry), and a system client's on its
 * delegations, so those totals are kept at most a second. Counting every matching row is the expensive part of a
 * page over 100k requests, so concurrent pages of one filter share one count.
 */
const COUNT_TTL_MS = 1_000;
const counts = new Map<string, { total: Promise<number>; at: number; timed: boolean }>();
function countOf(pool: pg.Pool, checkpoint: string, sql: string, params: unknown[], timed: boolean): Promise<number> {
  const key = `${checkpoint}\u0000${sql}\u0000${JSON.stringify(params)}`;
  const cached = counts.get(key);
  if (cached && (!cached.timed || Date.now() - cached.at < COUNT_TTL_MS)) return cached.total;
  if (counts.size > 1_000) counts.clear();
  const total = pool.query(sql, params).then((result) => result.rows[0].total as number);
  counts.set(key, { total, at: Date.now(), timed });
  total.catch(() => counts.delete(key));
  return total;
}

export async function listRequests(pool: pg.Pool, principal: Principal, query: ListQuery) {
  const where: string[] = [];
  const params: unknown[] = [];
  const add = (sql: string, value: unknown) => {
    params.push(value);
    where.push(sql.replace("?", `$${params.length}`));
  };
  // Applicants see their own requests only; a system client those of the applicants who delegated to it;
  // administrators all.
  const delegated = principal.kind === "client" && !isAdmin(principal);
  if (principal.kind === "applicant") add("r.applicant_id = ?", principal.id);
  else if (delegated) add(`r.applicant_id IN (${delegatedApplicantsSql("?")})`, principal.id);
  else if (principal.kind === "department") {
    // Departments see the requests routed to them: submitted, and the pinned workflow lists the department.
    add(
      `EXISTS (SELECT 1 FROM index.request_progress rp JOIN index.workflow_stages ws ON ws.workflow_id = rp.workflow_id
               JOIN index.departments dd ON dd.department_id = ANY(ws.department_ids) WHERE rp.token_id = r.token_id AND dd.code = ?)`,
      principal.code,
    );
  }
  if (query.applicantId) add("r.applicant_id = ?", query.applicantId);
  if (query.requestType) add("r.request_type = ?", query.requestType);
  if (query.status) statusFilter(query.status, add);
  const whereSql = where.length ? `WHERE ${where.join(" AND ")}` : "";
  // The tie-breaker runs the same way, so the (…, created_at, id) indexes serve the ORDER BY in either direction.
  const direction = query.sortOrder === "asc" ? "ASC" : "DESC";
  const order = `${SORT_COLUMNS[query.sortBy]} ${direction}, r.id ${direction}`;

  const countParams = [...params];
  params.push(query.limit, (query.page - 1) * query.limit);
  // The page and the index's checkpoint (which keys the cached total) in one round trip; the total after, if needed.
  const { page, checkpoint } = await readTogether(pool, {
    page: {
      sql: `SELECT q.*, ${STAGE_NAME_SQL} FROM (
              ${REQUEST_SELECT} ${whereSql} ORDER BY ${order} LIMIT $${params.length - 1} OFFSET $${params.length}
            ) q
            ${STAGE_NAME_JOIN}
            ORDER BY ${OUTER_SORT_COLUMNS[query.sortBy]} ${direction}, q.id ${direction}`,
      params,
    },
    checkpoint: { sql: `SELECT max(latest_checkpoint) AS c FROM index._ponder_checkpoint`, params: [] },
  });
  const total = await countOf(
    pool,
    (checkpoint[0]?.c as string | undefined) ?? "",
    `SELECT count(*)::int AS total FROM requests r JOIN index.licences l ON l.token_id = r.token_id ${whereSql}`,
    countParams,
    query.status === "APPROVED" || query.status === "EXPIRED" || delegated,
  );
  return {
    requests: page.map(toRequestListItem),
    pagination: { page: query.page, limit: query.limit, total, totalPages: Math.ceil(total / query.limit) },
  };
}
