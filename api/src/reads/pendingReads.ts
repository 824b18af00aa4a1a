/**
 * Requests waiting for a department now: under review, the current stage of the pinned workflow lists the
 * department, the department has no standing decision in that stage (or must review again), and for a SEQUENTIAL
 * stage every department before it has approved. Computed from the index (the chain's mirror).
 */
import type pg from "pg";
import { REQUEST_SELECT, STAGE_NAME_JOIN, STAGE_NAME_SQL, toRequestListItem } from "./requestReads.ts";

export async function pendingForDepartment(pool: pg.Pool, code: string, page: number, limit: number) {
  const { rows: candidates } = await pool.query(
    `SELECT p.token_id, p.stage, ws.execution_type, ws.department_ids, d.department_id
     FROM index.request_progress p
     JOIN index.workflow_stages ws ON ws.workflow_id = p.workflow_id AND ws.stage_index = p.stage
     JOIN index.departments d ON d.code = $1 AND d.department_id = ANY(ws.department_ids)
     WHERE p.phase = 'IN_REVIEW'`,
    [code],
  );
  if (candidates.length === 0) return { tokens: [] as string[], total: 0 };
  const { rows: decisions } = await pool.query(
    `SELECT token_id, stage, department_id, decision, is_active, invalidation_reason FROM index.approvals WHERE token_id = ANY($1) ORDER BY block_number, log_index`,
    [candidates.map((c) => c.token_id)],
  );
  const waiting: string[] = [];
  for (const candidate of candidates) {
    const ids: number[] = candidate.department_ids.map(Number);
    const standing = new Map<number, string>();
    for (const d of decisions) {
      if (d.token_id !== candidate.token_id || Number(d.stage) !== Number(candidate.stage)) continue;
      // An approval invalidated by a document update leaves the department to review again (no standing decision).
      if (d.is_active) standing.set(Number(d.department_id), d.decision);
      else if (String(d.invalidation_reason ?? "").startsWith("DOCUMENT_UPDATED")) standing.delete(Number(d.department_id));
    }
    const mine = Number(candidate.department_id);
    if (standing.has(mine)) continue;
    if (candidate.execution_type === "SEQUENTIAL") {
      const turn = ids.find((id) => standing.get(id) !== "APPROVED");
      if (turn !== mine) continue;
    }
    waiting.push(String(candidate.token_id));
  }
  return { tokens: waiting, total: waiting.length, page, limit };
}

/** The requests of the given tokens as list items (with their current stage's name), newest first. */
export async function requestsByTokens(pool: pg.Pool, tokens: string[]) {
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
