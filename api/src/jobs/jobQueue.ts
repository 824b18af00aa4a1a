/**
 * Enqueueing Agenda jobs inside our own database transactions: the job row is inserted with the change that
 * needs it, so a crash can delay a job, never lose it. NOTIFY is transactional too (sent at commit), and wakes
 * the job runners at once; without it they find the job at their next poll.
 *
 * Jobs carry a key (e.g. the delivery id): one live job per (name, key), and cancellation by key.
 */
import type pg from "pg";

export const JOBS_CHANNEL = "agenda_jobs";

export const JOB_NAMES = {
  deriveEvents: "derive-events",
  deliverWebhook: "deliver-webhook",
  stageTimeout: "stage-timeout",
  discardFiles: "discard-files",
  anchorStatusList: "anchor-status-list",
} as const;
export type JobName = (typeof JOB_NAMES)[keyof typeof JOB_NAMES];

type Queryable = Pick<pg.PoolClient, "query">;

/**
 * Schedules `name` for `runAt` (now when omitted). An existing idle job with the same key is moved to the new
 * time with the new data; a running one is left alone (it already does the work). False when it was running.
 */
export async function enqueueJob(
  db: Queryable,
  name: JobName,
  key: string,
  data: Record<string, unknown>,
  runAt?: Date,
): Promise<boolean> {
  const { rows } = await db.query(
    `INSERT INTO agenda_jobs (name, job_key, data, next_run_at, type, priority)
     VALUES ($1, $2, $3, COALESCE($4, now()), 'normal', 0)
     ON CONFLICT (name, job_key) WHERE job_key IS NOT NULL
       DO UPDATE SET data = EXCLUDED.data, next_run_at = EXCLUDED.next_run_at, fail_count = NULL, fail_reason = NULL, failed_at = NULL
       WHERE agenda_jobs.locked_at IS NULL
     RETURNING id, next_run_at`,
    [name, key, JSON.stringify(data), runAt ?? null],
  );
  if (rows.length === 0) return false;
  const notification = {
    jobId: rows[0].id,
    jobName: name,
    nextRunAt: rows[0].next_run_at.toISOString(),
    priority: 0,
    timestamp: new Date().toISOString(),
    source: "enqueue",
  };
  await db.query(`SELECT pg_notify($1, $2)`, [JOBS_CHANNEL, JSON.stringify(notification)]);
  return true;
}

/** Removes the idle job with this key, if any (a running one finishes and finds nothing to do). */
export async function cancelJob(db: Queryable, name: JobName, key: string): Promise<boolean> {
  const { rowCount } = await db.query(
    `DELETE FROM agenda_jobs WHERE name = $1 AND job_key = $2 AND locked_at IS NULL`,
    [name, key],
  );
  return (rowCount ?? 0) > 0;
}
