/**
 * Requests waiting for a department now: the index's pending_departments rows, which hold the contract's own
 * answer (pendingDepartmentsOf), so whose turn it is in a SEQUENTIAL stage is decided by the contract alone.
 */
import type pg from "pg";
import { readTogether } from "../db/readTogether.ts";
import { REQUEST_SELECT, STAGE_NAME_JOIN, STAGE_NAME_SQL, toRequestListItem } from "./requestReads.ts";

/** The tokens waiting for department $1. */
const WAITING_TOKENS = `SELECT pd.token_id FROM index.pending_departments pd
   JOIN index.departments d ON d.department_id = pd.department_id AND d.code = $1`;

/**
 * One page of the requests waiting for department `code`, newest first, each with its current stage's name, cut in
 * SQL (a department with many waiting requests is never read whole). `total` counts the waiting requests this API
 * knows; the page and the total come from one statement, so they agree.
 */
export async function pendingRequestsPage(pool: pg.Pool, code: string, page: number, limit: number) {
  const { rows, total } = await readTogether(pool, {
    rows: {
      sql: `SELECT q.*, ${STAGE_NAME_SQL} FROM (
              ${REQUEST_SELECT} WHERE r.token_id IN (${WAITING_TOKENS})
              ORDER BY r.created_at DESC, r.id DESC LIMIT $2 OFFSET $3
            ) q
            ${STAGE_NAME_JOIN}
            ORDER BY q.created_at DESC, q.id DESC`,
      params: [code, limit, (page - 1) * limit],
    },
    total: {
      sql: `SELECT count(*)::int AS n FROM requests r JOIN index.licences l ON l.token_id = r.token_id
            WHERE r.token_id IN (${WAITING_TOKENS})`,
      params: [code],
    },
  });
  const count = Number(total[0]?.n ?? 0);
  return {
    requests: rows.map(toRequestListItem),
    pagination: { page, limit, total: count, totalPages: Math.ceil(count / limit) },
  };
}

/** Whether a request is routed to a department: submitted, and its pinned workflow lists the department. */
export async function isRoutedTo(pool: pg.Pool, tokenId: bigint, code: string): Promise<boolean> {
  const { rowCount } = await pool.query(
    `SELECT 1 FROM index.request_progress p
     JOIN index.workflow_stages ws ON ws.workflow_id = p.workflow_id
     JOIN index.departments d ON d.code = $2 AND d.department_id = ANY(ws.department_ids)
     WHERE p.token_id = $1 LIMIT 1`,
    [tokenId.toString(), code],
  );
  return (rowCount ?? 0) > 0;
}
