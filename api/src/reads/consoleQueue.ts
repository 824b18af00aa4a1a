/**
 * The review console's queue: a department's open requests (routed to it, review started and not closed), each with
 * its current stage, when that stage started and when it is due (the stage's timeout on chain), overdue first.
 * Where the department stands in each comes from the index: AWAITING_DECISION is the contract's own answer
 * (pending_departments, so whose turn it is in a SEQUENTIAL stage is the contract's); otherwise the review's phase.
 * "Now" is the database's clock, the one every other read of expiry uses.
 */
import type pg from "pg";
import { stageNumber } from "../../../abis/index.ts";
import { readTogether } from "../db/readTogether.ts";
import { isoFromUnixSeconds } from "../encoding/unixTime.ts";

export const QUEUE_STATUSES = ["AWAITING_DECISION", "AWAITING_OTHERS", "AWAITING_RESUBMISSION", "ESCALATED"] as const;
export type QueueStatus = (typeof QUEUE_STATUSES)[number];
export const QUEUE_SORTS = ["due", "oldest", "newest"] as const;

export interface QueueQuery {
  requestType?: string;
  status?: QueueStatus;
  /** Only requests whose current stage started at least this many days ago. */
  olderThanDays?: number;
  sort: (typeof QUEUE_SORTS)[number];
  page: number;
  limit: number;
}

export interface QueueItem {
  requestId: string;
  requestNumber: string;
  tokenId: number;
  requestType: string;
  applicantName: string;
  requestStatus: string;
  status: QueueStatus;
  submittedAt: string | null;
  stage: {
    index: number;
    number: number;
    name: string;
    mode: string;
    completion: string;
    startedAt: string;
    timeoutDays: number | null;
    dueAt: string | null;
    onTimeout: string | null;
  };
  overdue: boolean;
}

/**
 * One row per open request routed to department $1 (a stage of its pinned workflow lists the department), with the
 * current stage's settings as the chain holds them and its name from the stored definition.
 */
const OPEN_REQUESTS = `
  WITH dept AS (SELECT department_id FROM index.departments WHERE code = $1)
  SELECT r.id, r.request_number, r.token_id, r.request_type, r.applicant_name, l.status AS request_status,
         p.stage, p.phase, p.stage_started_at, p.submitted_at,
         ws.execution_type, ws.completion, ws.on_timeout, ws.timeout_seconds,
         CASE WHEN ws.timeout_seconds > 0 THEN p.stage_started_at + ws.timeout_seconds END AS due_at,
         (p.phase = 'IN_REVIEW' AND ws.timeout_seconds > 0
            AND p.stage_started_at + ws.timeout_seconds <= extract(epoch FROM now())) AS overdue,
         CASE WHEN pd.token_id IS NOT NULL THEN 'AWAITING_DECISION'
              WHEN p.phase = 'ESCALATED' THEN 'ESCALATED'
              WHEN p.phase = 'AWAITING_RESUBMISSION' THEN 'AWAITING_RESUBMISSION'
              ELSE 'AWAITING_OTHERS' END AS queue_status,
         (SELECT w.stages -> p.stage ->> 'stageName' FROM index.workflows iw
            JOIN workflows w ON w.definition_hash = iw.definition_hash
           WHERE iw.workflow_id = p.workflow_id LIMIT 1) AS stage_name
    FROM index.request_progress p
    JOIN index.licences l ON l.token_id = p.token_id
    JOIN requests r ON r.token_id = p.token_id
    JOIN index.workflow_stages ws ON ws.workflow_id = p.workflow_id AND ws.stage_index = p.stage
    LEFT JOIN index.pending_departments pd
      ON pd.token_id = p.token_id AND pd.department_id = (SELECT department_id FROM dept)
   WHERE p.phase IN ('IN_REVIEW', 'ESCALATED', 'AWAITING_RESUBMISSION')
     AND EXISTS (SELECT 1 FROM index.workflow_stages s
                  WHERE s.workflow_id = p.workflow_id AND (SELECT department_id FROM dept) = ANY(s.department_ids))`;

const ORDER: Record<QueueQuery["sort"], string> = {
  // Overdue first; then what waits for the department; then the nearest deadline; then the longest waiting.
  due: `overdue DESC, (queue_status = 'AWAITING_DECISION') DESC, due_at ASC NULLS LAST, stage_started_at ASC, id`,
  oldest: `stage_started_at ASC, id`,
  newest: `stage_started_at DESC, id`,
};

/** One page of the department's queue, its counts per status and of overdue requests (under the other filters). */
export async function consoleQueue(pool: pg.Pool, code: string, query: QueueQuery) {
  const where: string[] = [];
  const params: unknown[] = [code];
  const add = (sql: string, value: unknown) => {
    params.push(value);
    where.push(sql.replace("?", `$${params.length}`));
  };
  if (query.requestType) add("request_type = ?", query.requestType);
  // 0 asks for no age limit: a stage stamped with a block time a moment ahead of this clock is still in.
  if (query.olderThanDays)
    add("stage_started_at <= extract(epoch FROM now()) - ?::float8 * 86400", query.olderThanDays);
  const filtered = `SELECT * FROM (${OPEN_REQUESTS}) q ${where.length ? `WHERE ${where.join(" AND ")}` : ""}`;
  const countParams = [...params];
  const statusFilter = query.status ? `WHERE queue_status = $${params.push(query.status)}` : "";
  params.push(query.limit, (query.page - 1) * query.limit);
  const { rows, counts } = await readTogether(pool, {
    rows: {
      sql: `SELECT * FROM (${filtered}) f ${statusFilter}
            ORDER BY ${ORDER[query.sort]} LIMIT $${params.length - 1} OFFSET $${params.length}`,
      params,
    },
    counts: {
      sql: `SELECT queue_status, count(*)::int AS n, count(*) FILTER (WHERE overdue)::int AS overdue
              FROM (${filtered}) f GROUP BY queue_status`,
      params: countParams,
    },
  });
  const byStatus = Object.fromEntries(QUEUE_STATUSES.map((s) => [s, 0])) as Record<QueueStatus, number>;
  let overdue = 0;
  for (const row of counts) {
    byStatus[row.queue_status as QueueStatus] = Number(row.n);
    if (!query.status || row.queue_status === query.status) overdue += Number(row.overdue);
  }
  const total = query.status ? byStatus[query.status] : Object.values(byStatus).reduce((a, b) => a + b, 0);
  return {
    items: rows.map(queueItem),
    counts: { ...byStatus, overdue },
    pagination: { page: query.page, limit: query.limit, total, totalPages: Math.ceil(total / query.limit) },
  };
}

function queueItem(row: Record<string, any>): QueueItem {
  const timeoutSeconds = Number(row.timeout_seconds);
  return {
    requestId: row.id,
    requestNumber: row.request_number,
    tokenId: Number(row.token_id),
    requestType: row.request_type,
    applicantName: row.applicant_name ?? "",
    requestStatus: row.request_status,
    status: row.queue_status,
    submittedAt: Number(row.submitted_at) > 0 ? isoFromUnixSeconds(row.submitted_at) : null,
    stage: {
      index: Number(row.stage),
      number: stageNumber(row.stage),
      name: row.stage_name ?? "",
      mode: row.execution_type,
      completion: row.completion,
      startedAt: isoFromUnixSeconds(row.stage_started_at),
      timeoutDays: timeoutSeconds > 0 ? timeoutSeconds / 86_400 : null,
      dueAt: row.due_at == null ? null : isoFromUnixSeconds(row.due_at),
      onTimeout: timeoutSeconds > 0 ? row.on_timeout : null,
    },
    overdue: Boolean(row.overdue),
  };
}
