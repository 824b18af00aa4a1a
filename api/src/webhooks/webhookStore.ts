/** Webhook registrations: the secret sealed (chain/secretSealer.ts, bound to the webhook id), soft deletion keeps logs. */
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

const toWebhook = (row: Record<string, any>): StoredWebhook => ({
  id: row.id,
  departmentCode: row.department_code,
  url: row.url,
  events: row.events,
  isActive: row.is_active,
  disabledAt: row.disabled_at,
  createdAt: row.created_at,
});

export async function findWebhook(pool: pg.Pool, id: string): Promise<(StoredWebhook & { secretSealed: Buffer }) | undefined> {
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

export const webhookJson = (w: StoredWebhook) => ({
  webhookId: w.id,
  departmentCode: w.departmentCode,
  url: w.url,
  events: w.events,
  isActive: w.isActive,
  createdAt: w.createdAt.toISOString(),
});
