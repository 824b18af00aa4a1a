/**
 * A department's statistics, computed from the chain index alone (see STATS_DEFINITIONS, also the route's
 * description). Times are block timestamps (unix seconds); the period covers whole UTC days.
 */
import type pg from "pg";
import type { StoredDepartment } from "../stores/departmentStore.ts";

export const STATS_DEFINITIONS = [
  "Computed from the blockchain index. The period is [startDate 00:00 UTC, endDate 24:00 UTC); startDate defaults to the department's registration date, endDate to today (UTC).",
  "- totalReceived: submitted requests routed to the department — its pinned workflow version lists the department in any stage — first submitted within the period.",
  "- approved / rejected: the department's reviews whose latest decision within the period is APPROVED / REJECTED. A review is one (request, stage) pair (a department listed in two stages of a workflow reviews a request twice); a decision counts whether or not it is still active (a later document update that invalidated it does not undo the work), and a decision superseded by a later one of the same review in the period does not count.",
  "- pending: now, not within the period — requests in review (not awaiting resubmission, not escalated) whose current stage lists the department, where the department has no active decision in that stage and, in a SEQUENTIAL stage, every department listed before it has approved (its turn has come).",
  "- avgProcessingTimeDays: over the reviews counted in approved and rejected, the average time in days from the start of the stage (the latest StageStarted of that stage before the decision: a resubmission, reopening or escalation sent back restarts it) to the decision; rounded to 3 decimals; 0 when there is none.",
].join("\n");

export interface DepartmentStats {
  departmentCode: string;
  period: { startDate: string; endDate: string };
  stats: { totalReceived: number; approved: number; rejected: number; pending: number; avgProcessingTimeDays: number };
}

const day = (date: Date) => date.toISOString().slice(0, 10);

export async function departmentStats(
  pool: Pick<pg.Pool, "query">,
  department: StoredDepartment,
  period: { startDate?: string; endDate?: string },
): Promise<DepartmentStats> {
  const startDate = period.startDate ?? day(department.createdAt);
  const endDate = period.endDate ?? day(new Date());
  const from = Date.parse(`${startDate}T00:00:00Z`) / 1000;
  const to = Date.parse(`${endDate}T00:00:00Z`) / 1000 + 86_400;
  const id = department.chainDepartmentId;

  const [received, decided, pending] = await Promise.all([
    pool.query(
      `SELECT count(*)::int AS n
       FROM index.licences l JOIN index.request_progress p ON p.token_id = l.token_id
       WHERE p.submitted_at >= $2 AND p.submitted_at < $3
         AND EXISTS (SELECT 1 FROM index.workflow_stages ws WHERE ws.workflow_id = l.workflow_id AND $1 = ANY (ws.department_ids))`,
      [id, from, to],
    ),
    pool.query(
      `WITH latest AS (
         SELECT DISTINCT ON (a.token_id, a.stage) a.token_id, a.stage, a.decision, a.timestamp, a.block_number, a.log_index
         FROM index.approvals a
         WHERE a.department_id = $1 AND a.timestamp >= $2 AND a.timestamp < $3
         ORDER BY a.token_id, a.stage, a.block_number DESC, a.log_index DESC
       ), counted AS (
         SELECT latest.decision,
                latest.timestamp - (
                  SELECT max(se.timestamp) FROM index.stage_events se
                  WHERE se.token_id = latest.token_id AND se.stage = latest.stage AND se.event_type = 'StageStarted'
                    AND (se.block_number, se.log_index) < (latest.block_number, latest.log_index)
                ) AS seconds
         FROM latest WHERE latest.decision IN ('APPROVED', 'REJECTED')
       )
       SELECT count(*) FILTER (WHERE decision = 'APPROVED')::int AS approved,
              count(*) FILTER (WHERE decision = 'REJECTED')::int AS rejected,
              avg(seconds)::float8 AS avg_seconds
       FROM counted`,
      [id, from, to],
    ),
    pool.query(
      // The contract's own answer (pendingDepartmentsOf), kept by the indexer: the turn rule is not repeated here.
      `SELECT count(*)::int AS n FROM index.pending_departments WHERE department_id = $1`,
      [id],
    ),
  ]);

  const avgSeconds = decided.rows[0].avg_seconds as number | null;
  return {
    departmentCode: department.code,
    period: { startDate, endDate },
    stats: {
      totalReceived: received.rows[0].n,
      approved: decided.rows[0].approved,
      rejected: decided.rows[0].rejected,
      pending: pending.rows[0].n,
      avgProcessingTimeDays: avgSeconds === null ? 0 : Math.round((avgSeconds / 86_400) * 1000) / 1000,
    },
  };
}
