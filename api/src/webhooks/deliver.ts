/**
 * One delivery attempt: the attempt is logged (pending) before the request is sent, then completed with the
 * receiver's status and time. JSON body, signed headers, 10 s timeout, redirects not followed, any 2xx is success.
 */
import { randomUUID } from "node:crypto";
import type pg from "pg";
import { checkWebhookUrl } from "./urlSafety.ts";
import { signDelivery } from "./signing.ts";

export const DELIVERY_TIMEOUT_MS = 10_000;

export interface DeliveryTarget {
  id: string;
  url: string;
  secret: string;
}

export interface DeliveryResult {
  logId: string;
  success: boolean;
  statusCode: number | null;
  responseTime: number;
  error?: string;
}

export async function deliver(
  pool: pg.Pool,
  target: DeliveryTarget,
  event: { eventId: string; eventType: string; payload: unknown; retryCount?: number; deliveryId?: string },
  options: { production: boolean; now?: () => Date },
): Promise<DeliveryResult> {
  const body = JSON.stringify(event.payload);
  const logId = randomUUID();
  await pool.query(
    `INSERT INTO webhook_logs (id, webhook_id, event_id, event_type, payload, status, retry_count, delivery_id) VALUES ($1, $2, $3, $4, $5, 'pending', $6, $7)`,
    [logId, target.id, event.eventId, event.eventType, body, event.retryCount ?? 0, event.deliveryId ?? null],
  );
  const started = performance.now();
  let statusCode: number | null = null;
  let error: string | undefined;
  try {
    await checkWebhookUrl(target.url, { production: options.production }); // DNS may have changed since registration
    const response = await fetch(target.url, {
      method: "POST",
      headers: { "content-type": "application/json", "user-agent": "licence-approval-webhooks/1", ...signDelivery(target.secret, event.eventId, body, options.now?.()) },
      body,
      redirect: "manual",
      signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
    });
    statusCode = response.status;
    await response.body?.cancel().catch(() => {});
  } catch (failure) {
    error = (failure as Error).message.slice(0, 300);
  }
  const responseTime = Math.round(performance.now() - started);
  const success = statusCode !== null && statusCode >= 200 && statusCode < 300;
  await pool.query(`UPDATE webhook_logs SET status = $2, response_status = $3, response_time = $4, error = $5 WHERE id = $1`, [
    logId, success ? "success" : "failed", statusCode, responseTime, error ?? (success ? null : `HTTP ${statusCode}`),
  ]);
  return { logId, success, statusCode, responseTime, error };
}
