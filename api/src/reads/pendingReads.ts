/**
 * Requests waiting for a department now: the index's pending_departments rows, which hold the contract's own
 * answer (pendingDepartmentsOf), so whose turn it is in a SEQUENTIAL stage is decided by the contract alone.
 */
import type pg from "pg";
import { REQUEST_SELECT, STAGE_NAME_JOIN, STAGE_NAME_SQL, toRequestListItem } from "./requestReads.ts";

/**
 * One page of the requests waiting for department `code`, newest first, each with its current stage's name. The
 * page is cut here, after the requests are read: `total` counts the waiting requests this API knows.
 */
export async function pendingRequestsPage(pool: pg.Pool, code: string, page: number, limit: number) {
  const items = await requestsByTokens(pool, await tokensPendingFor(pool, code));
  return {
    requests: items.slice((page - 1) * limit, page * limit),
    pagination: { page, limit, total: items.length, totalPages: Math.ceil(items.length / limit) },
  };
}

async function tokensPendingFor(pool: pg.Pool, code: string): Promise<string[]> {
  const { rows } = await pool.query(
    `SELECT pd.token_id FROM index.pending_departments pd
     JOIN index.departments d ON d.department_id = pd.department_id AND d.code = $1
     ORDER BY pd.token_id`,
    [code],
  );
  return rows.map((row) => String(row.token_id));
}

/** The requests of the given tokens as list items (with their current stage's name), newest first. */
async function requestsByTokens(pool: pg.Pool, tokens: string[]) {
  if (tokens.length === 0) return [];
  const { rows } = await pool.query(
    `SELECT q.*, ${STAGE_NAME_SQL} FROM (${REQUEST_SELECT} WHERE r.token_id = ANY($1)) q ${STAGE_NAME_JOIN} ORDER BY q.created_at DESC, q.id DESC`,
    [tokens],
  );
  return rows.map(toRequestListItem);
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
