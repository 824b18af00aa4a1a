/**
 * Webhook registrations and their delivery logs: every SQL statement about them that the webhook use case
 * (domain/webhooks/manageWebhooks.ts) needs. The secret is stored sealed (chain/secretSealer.ts, bound to the
 * webhook id); soft deletion keeps the logs.
 */
import type pg from "pg";

export interface StoredWebhook {
  id: string;
  departmentCode: string | null;
  url: string;
  events: string[];
  isActive: boolean;
  disabledAt: Date | null;
  createdAt: Date;
}

/** A client or a pool: writes run in the caller's transaction. */
type Queryable = Pick<pg.PoolClient, "query">;

const WEBHOOK_LOCK_CLASS = 0x574842; // "WHB": advisory lock class of webhook limits, keyed by what is limited

/**
 * Takes a transaction advisory lock on `key` (held until the transaction ends), so that a count and the row it
 * admits are one step for every API process and job runner.
 */
export async function lockWebhookLimit(client: pg.PoolClient, key: string): Promise<void> {
  await client.query(`SELECT pg_advisory_xact_lock($1, hashtext($2))`, [WEBHOOK_LOCK_CLASS, key]);
}

const toWebhook = (row: Record<string, any>): StoredWebhook => ({
  id: row.id,
  departmentCode: row.department_code,
  url: row.url,
  events: row.events,
  isActive: row.is_active,
  disabledAt: row.disabled_at,
  createdAt: row.created_at,
});

export async function findWebhook(
  pool: pg.Pool,
  id: string,
): Promise<(StoredWebhook & { secretSealed: Buffer }) | undefined> {
  const { rows } = await pool.query(`SELECT * FROM webhooks WHERE id = $1 AND deleted_at IS NULL`, [id]);
  return rows[0] ? { ...toWebhook(rows[0]), secretSealed: rows[0].secret_sealed } : undefined;
}

export async function listWebhooks(pool: pg.Pool, departmentCode?: string): Promise<StoredWebhook[]> {
  const { rows } = await pool.query(
    `SELECT * FROM webhooks WHERE deleted_at IS NULL ${departmentCode ? "AND department_code = $1" : ""} ORDER BY created_at`,
    departmentCode ? [departmentCode] : [],
  );
  return rows.map(toWebhook);
}

/** The live webhooks of one department (null: the administrators' webhooks without a department). */
export async function webhooksOfDepartment(
  db: Queryable,
  departmentCode: string | null,
): Promise<Pick<StoredWebhook, "id" | "url">[]> {
  const { rows } = await db.query(
    `SELECT id, url FROM webhooks WHERE deleted_at IS NULL AND department_code IS NOT DISTINCT FROM $1 ORDER BY created_at`,
    [departmentCode],
  );
  return rows.map((row) => ({ id: row.id, url: row.url }));
}

export interface NewWebhook {
  id: string;
  departmentCode: string | null;
  url: string;
  events: string[];
  secretSealed: Buffer;
  /** `<principal kind>:<principal id>` */
  createdBy: string;
}

/** Inserts a registration; its creation time. */
export async function insertWebhook(client: Queryable, webhook: NewWebhook): Promise<Date> {
  const { rows } = await client.query(
    `INSERT INTO webhooks (id, department_code, url, events, secret_sealed, created_by) VALUES ($1, $2, $3, $4, $5, $6) RETURNING created_at`,
    [webhook.id, webhook.departmentCode, webhook.url, webhook.events, webhook.secretSealed, webhook.createdBy],
  );
  return rows[0].created_at as Date;
}

/** Soft-deletes a webhook and cancels what it had pending (it is not delivered any more). */
export async function deleteWebhook(client: Queryable, id: string): Promise<void> {
  await client.query(`UPDATE webhooks SET deleted_at = now(), is_active = false WHERE id = $1`, [id]);
  await client.query(
    `UPDATE webhook_deliveries SET status = 'CANCELLED', updated_at = now() WHERE webhook_id = $1 AND status IN ('PENDING', 'HELD')`,
    [id],
  );
}

/** Re-enables a webhook; the ids of the deliveries held while it was disabled, now pending again. */
export async function enableWebhook(client: Queryable, id: string): Promise<string[]> {
  await client.query(`UPDATE webhooks SET is_active = true, disabled_at = NULL, disabled_reason = NULL WHERE id = $1`, [
    id,
  ]);
  const held = await client.query(
    `UPDATE webhook_deliveries SET status = 'PENDING', next_attempt_at = NULL, updated_at = now() WHERE webhook_id = $1 AND status = 'HELD' RETURNING id`,
    [id],
  );
  return held.rows.map((row) => row.id as string);
}

/**
 * The URLs of the attempts in flight: logged `pending` less than `windowMs` ago (an attempt a stopped process left
 * pending stops counting then). Attempts in flight are few: at most the job runners' concurrency plus test deliveries.
 */
export async function inFlightUrls(db: Queryable, windowMs: number): Promise<string[]> {
  const { rows } = await db.query(
    `SELECT w.url FROM webhook_logs l JOIN webhooks w ON w.id = l.webhook_id
     WHERE l.status = 'pending' AND l.created_at > clock_timestamp() - make_interval(secs => $1)`,
    [windowMs / 1000],
  );
  return rows.map((row) => row.url as string);
}

/**
 * When the test deliveries of one department's webhooks (null: those without a department) in the last `windowMs`
 * were made, oldest first.
 */
export async function recentTestDeliveries(
  db: Queryable,
  departmentCode: string | null,
  windowMs: number,
): Promise<Date[]> {
  const { rows } = await db.query(
    `SELECT l.created_at FROM webhook_logs l JOIN webhooks w ON w.id = l.webhook_id
     WHERE l.event_type = 'WEBHOOK_TEST' AND l.delivery_id IS NULL AND w.department_code IS NOT DISTINCT FROM $1
       AND l.created_at > clock_timestamp() - make_interval(secs => $2)
     ORDER BY l.created_at`,
    [departmentCode, windowMs / 1000],
  );
  return rows.map((row) => row.created_at as Date);
}

export interface WebhookLogFilter {
  /** Only the logs of this department's webhooks. */
  departmentCode?: string;
  webhookId?: string;
  status?: "success" | "failed" | "pending";
  page: number;
  limit: number;
}

export interface WebhookLog {
  logId: string;
  webhookId: string;
  eventId: string;
  eventType: string;
  payload: Record<string, unknown>;
  status: "success" | "failed" | "pending";
  responseStatus: number | null;
  responseTime: number | null;
  retryCount: number;
  createdAt: string;
  error: string | null;
  nextRetryAt: string | null;
}

/** Delivery attempts, newest first, one page of them and how many match in all. */
export async function listWebhookLogs(
  pool: pg.Pool,
  filter: WebhookLogFilter,
): Promise<{ logs: WebhookLog[]; total: number }> {
  const where: string[] = [];
  const params: unknown[] = [];
  if (filter.departmentCode) where.push(`w.department_code = $${params.push(filter.departmentCode)}`);
  if (filter.webhookId) where.push(`l.webhook_id = $${params.push(filter.webhookId)}`);
  if (filter.status) where.push(`l.status = $${params.push(filter.status)}`);
  const whereSql = where.length ? `WHERE ${where.join(" AND ")}` : "";
  const total = (
    await pool.query(
      `SELECT count(*)::int AS n FROM webhook_logs l JOIN webhooks w ON w.id = l.webhook_id ${whereSql}`,
      params,
    )
  ).rows[0].n as number;
  const { rows } = await pool.query(
    `SELECT l.* FROM webhook_logs l JOIN webhooks w ON w.id = l.webhook_id ${whereSql} ORDER BY l.created_at DESC, l.id LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
    [...params, filter.limit, (filter.page - 1) * filter.limit],
  );
  const logs = rows.map((r) => ({
    logId: r.id,
    webhookId: r.webhook_id,
    eventId: r.event_id,
    eventType: r.event_type,
    payload: r.payload,
    status: r.status,
    responseStatus: r.response_status,
    responseTime: r.response_time,
    retryCount: r.retry_count,
    createdAt: r.created_at.toISOString(),
    error: r.error ?? null,
    nextRetryAt: r.next_retry_at?.toISOString() ?? null,
  }));
  return { logs, total };
}

export const webhookJson = (w: StoredWebhook) => ({
  webhookId: w.id,
  departmentCode: w.departmentCode,
  url: w.url,
  events: w.events,
  isActive: w.isActive,
  createdAt: w.createdAt.toISOString(),
});
