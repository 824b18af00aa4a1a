/**
 * One run of a delivery's job: attempt it, then record the outcome and the next step, in one transaction.
 * Retries follow the specification exactly: after a failure, again at +1 min, +5 min, +30 min, +2 h, +24 h (on
 * the job clock); when the 5th retry fails too, the webhook is disabled until someone re-enables it. Deliveries
 * to a disabled webhook are HELD (not attempted) and go out when it is re-enabled.
 *
 * At most MAX_DELIVERIES_PER_HOST attempts to one host are in flight at once (deliver.ts hostSlot, across
 * processes): a delivery whose host is busy makes no attempt, frees its job slot and runs again in about a second.
 *
 * The delivery row, not the job, is the source of truth: a job that runs again after a crash finds the attempt
 * already recorded (and waits for its retry time), or an attempt left `pending` (marked interrupted and made again).
 */
import type pg from "pg";
import type { Logger } from "pino";
import { audit, SYSTEM } from "../stores/auditLog.ts";
import type { SecretSealer } from "../chain/secretSealer.ts";
import { withTransaction } from "../db/transaction.ts";
import type { JobClock } from "../jobs/jobClock.ts";
import { deliverIfAdmitted, hostSlot } from "./deliver.ts";

export const RETRY_SCHEDULE_MS = [60_000, 5 * 60_000, 30 * 60_000, 2 * 3_600_000, 24 * 3_600_000] as const;

export interface DeliveryJobDependencies {
  pool: pg.Pool;
  /** Opens the webhooks' sealed secrets. */
  secrets: SecretSealer;
  clock: JobClock;
  production: boolean;
  logger: Logger;
}

export type DeliveryOutcome =
  "DELIVERED" | "RETRY" | "FAILED" | "HELD" | "CANCELLED" | "NOTHING_TO_DO" | "WAITING" | "HOST_BUSY";

/** A delivery whose host is busy runs again after 0.5-1.5 s (real time: slots free up in real time). */
const hostBusyDelayMs = () => 500 + Math.floor(Math.random() * 1_000);

/** Runs the delivery; `retryAt` tells the job when to run next. */
export async function runDelivery(
  deps: DeliveryJobDependencies,
  deliveryId: string,
): Promise<{ outcome: DeliveryOutcome; retryAt?: Date }> {
  const due = await dueDelivery(deps, deliveryId);
  if ("outcome" in due) return due;
  const { delivery } = due;
  const retryCount: number = delivery.attempts;
  const result = await attempt(deps, delivery, deliveryId);
  if (!result) return { outcome: "HOST_BUSY", retryAt: new Date(Date.now() + hostBusyDelayMs()) };
  const finishedAt = deps.clock.now();
  return withTransaction(deps.pool, async (client) => {
    if (result.success) {
      await client.query(
        `UPDATE webhook_deliveries SET status = 'DELIVERED', attempts = attempts + 1, next_attempt_at = NULL, updated_at = now() WHERE id = $1`,
        [deliveryId],
      );
      return { outcome: "DELIVERED" as const };
    }
    if (retryCount < RETRY_SCHEDULE_MS.length) {
      const retryAt = new Date(finishedAt.getTime() + deps.clock.scaled(RETRY_SCHEDULE_MS[retryCount]));
      await client.query(
        `UPDATE webhook_deliveries SET attempts = attempts + 1, next_attempt_at = $2, updated_at = now() WHERE id = $1`,
        [deliveryId, retryAt],
      );
      await client.query(`UPDATE webhook_logs SET next_retry_at = $2 WHERE id = $1`, [result.logId, retryAt]);
      return { outcome: "RETRY" as const, retryAt };
    }
    await giveUp(client, deps.logger, delivery, deliveryId, retryCount);
    return { outcome: "FAILED" as const };
  });
}

/**
 * The delivery's row when an attempt is due now; otherwise what to do instead: nothing (done or gone), cancel it
 * (its webhook was deleted), hold it (its webhook is disabled) or wait for its retry time.
 */
async function dueDelivery(
  { pool, clock }: DeliveryJobDependencies,
  deliveryId: string,
): Promise<{ delivery: DeliveryRow } | { outcome: DeliveryOutcome; retryAt?: Date }> {
  const { rows } = await pool.query(
    `SELECT d.*, w.url, w.secret_sealed, w.is_active, w.deleted_at FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id WHERE d.id = $1`,
    [deliveryId],
  );
  const delivery = rows[0];
  if (!delivery || delivery.status !== "PENDING") return { outcome: "NOTHING_TO_DO" };
  if (delivery.deleted_at) {
    await pool.query(`UPDATE webhook_deliveries SET status = 'CANCELLED', updated_at = now() WHERE id = $1`, [
      deliveryId,
    ]);
    return { outcome: "CANCELLED" };
  }
  if (!delivery.is_active) {
    await pool.query(`UPDATE webhook_deliveries SET status = 'HELD', updated_at = now() WHERE id = $1`, [deliveryId]);
    return { outcome: "HELD" };
  }
  if (delivery.next_attempt_at && delivery.next_attempt_at.getTime() > clock.now().getTime())
    return { outcome: "WAITING", retryAt: delivery.next_attempt_at };
  return { delivery };
}

/** A webhook_deliveries row joined with its webhook's url, sealed secret and state. */
type DeliveryRow = Record<string, any>;

/**
 * One attempt (a webhook_logs row), if its host has a free slot (undefined: it has none, nothing was attempted); an
 * attempt a stopped process left pending is marked interrupted first.
 */
async function attempt(deps: DeliveryJobDependencies, delivery: DeliveryRow, deliveryId: string) {
  await deps.pool.query(
    `UPDATE webhook_logs SET status = 'failed', error = 'interrupted: the process stopped during this attempt' WHERE delivery_id = $1 AND status = 'pending'`,
    [deliveryId],
  );
  return deliverIfAdmitted(
    deps.pool,
    {
      id: delivery.webhook_id,
      url: delivery.url,
      secret: deps.secrets.open(delivery.webhook_id, delivery.secret_sealed),
    },
    {
      eventId: delivery.delivery_id,
      eventType: delivery.event_name,
      payload: delivery.payload,
      retryCount: delivery.attempts,
      deliveryId,
    },
    { production: deps.production, now: deps.clock.now },
    hostSlot(delivery.url),
  );
}

/** The last retry failed: the delivery is FAILED and its webhook disabled (audited) until someone re-enables it. */
async function giveUp(
  client: pg.PoolClient,
  logger: Logger,
  delivery: DeliveryRow,
  deliveryId: string,
  retryCount: number,
): Promise<void> {
  await client.query(
    `UPDATE webhook_deliveries SET status = 'FAILED', attempts = attempts + 1, next_attempt_at = NULL, updated_at = now() WHERE id = $1`,
    [deliveryId],
  );
  await client.query(
    `UPDATE webhooks SET is_active = false, disabled_at = now(), disabled_reason = $2 WHERE id = $1 AND is_active`,
    [delivery.webhook_id, `disabled after ${retryCount + 1} failed attempts of delivery ${delivery.delivery_id}`],
  );
  await audit(client, SYSTEM, {
    entityType: "WEBHOOK",
    entityId: delivery.webhook_id,
    action: "DISABLE",
    oldValue: { isActive: true },
    newValue: { isActive: false, reason: "retries exhausted", deliveryId: delivery.delivery_id },
  });
  logger.warn(
    { webhookId: delivery.webhook_id, deliveryId: delivery.delivery_id },
    "webhook disabled after the last retry failed",
  );
}
