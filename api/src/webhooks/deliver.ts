/**
 * One delivery attempt: the attempt is logged (pending) before the request is sent, then completed with the
 * receiver's status and time. JSON body, signed headers, 10 s timeout, redirects not followed, any 2xx is success.
 * The connection goes through the guarded agent (urlSafety.ts), so the address checked is the address connected to;
 * a refused target is reported as `refused`, with no status and no time (no port-scanning oracle).
 *
 * An attempt may be admitted first (deliverIfAdmitted): a check made under an advisory lock in the transaction that
 * logs the attempt, so that "how many are in flight" and "one more" are one step for every process. Delivery jobs
 * use it to hold at most MAX_DELIVERIES_PER_HOST attempts per host in flight (hostSlot).
 */
import { randomUUID } from "node:crypto";
import type pg from "pg";
import { fetch, type Agent } from "undici";
import { withTransaction } from "../db/transaction.ts";
import { guardedAgent, parseWebhookUrl, RefusedAddressError, type AddressPolicy } from "./urlSafety.ts";
import { signDelivery } from "./signing.ts";
import { inFlightUrls, lockWebhookLimit } from "./webhookStore.ts";

export const DELIVERY_TIMEOUT_MS = 10_000;

/**
 * Delivery jobs to one host in flight at once, across every job runner: one slow or hostile host holds at most this
 * many job slots, and the rest of its deliveries wait their turn without holding one.
 */
export const MAX_DELIVERIES_PER_HOST = 2;

/** How long a pending attempt counts as in flight: its timeout plus a margin (one a stopped process left stops counting). */
const IN_FLIGHT_MS = DELIVERY_TIMEOUT_MS + 5_000;

/**
 * Decides whether an attempt may be made now, in the transaction that would log it (which holds its lock): true to
 * go on, false to make no attempt; it may throw to refuse the attempt with an error.
 */
export interface Admission {
  /** The advisory lock taken first (webhookStore.ts lockWebhookLimit). */
  lock: string;
  admit: (client: pg.PoolClient) => Promise<boolean>;
}

export interface DeliveryTarget {
  id: string;
  url: string;
  secret: string;
}

export interface DeliveryResult {
  logId: string;
  success: boolean;
  statusCode: number | null;
  /** Null when the target was refused: how long a refused target took is not reported. */
  responseTime: number | null;
  /** The target's address is not allowed (nothing was sent). */
  refused: boolean;
  error?: string;
}

const agents = new Map<boolean, Agent>();
/** One agent per mode (its connection pool is shared by every delivery); a custom resolver gets its own. */
function agentFor(policy: AddressPolicy): Agent {
  if (policy.resolve) return guardedAgent(policy);
  let agent = agents.get(policy.production);
  if (!agent) agents.set(policy.production, (agent = guardedAgent(policy)));
  return agent;
}

const isRefusal = (failure: unknown): boolean =>
  failure instanceof RefusedAddressError ||
  (failure as { code?: string })?.code === "INVALID_WEBHOOK_URL" ||
  (failure instanceof Error && failure.cause !== undefined && isRefusal(failure.cause));

export interface DeliveryEvent {
  eventId: string;
  eventType: string;
  payload: unknown;
  retryCount?: number;
  deliveryId?: string;
}

type DeliveryOptions = AddressPolicy & { now?: () => Date };

/** Makes one attempt now. */
export async function deliver(
  pool: pg.Pool,
  target: DeliveryTarget,
  event: DeliveryEvent,
  options: DeliveryOptions,
): Promise<DeliveryResult> {
  const logId = randomUUID();
  await logAttempt(pool, logId, target, event);
  return send(pool, logId, target, event, options);
}

/** Makes one attempt if `admission` admits it; undefined when it does not (nothing logged, nothing sent). */
export async function deliverIfAdmitted(
  pool: pg.Pool,
  target: DeliveryTarget,
  event: DeliveryEvent,
  options: DeliveryOptions,
  admission: Admission,
): Promise<DeliveryResult | undefined> {
  const logId = randomUUID();
  const admitted = await withTransaction(pool, async (client) => {
    await lockWebhookLimit(client, admission.lock);
    if (!(await admission.admit(client))) return false;
    await logAttempt(client, logId, target, event);
    return true;
  });
  return admitted ? send(pool, logId, target, event, options) : undefined;
}

/** The host a webhook URL's deliveries are counted under (its name or address, without the port). */
export const hostOf = (url: string): string => {
  try {
    return new URL(url).hostname;
  } catch {
    return url;
  }
};

/** Admits an attempt while fewer than `limit` attempts to the same host are in flight, in every process. */
export function hostSlot(url: string, limit = MAX_DELIVERIES_PER_HOST): Admission {
  const host = hostOf(url);
  return {
    lock: `host:${host}`,
    admit: async (client) =>
      (await inFlightUrls(client, IN_FLIGHT_MS)).filter((u) => hostOf(u) === host).length < limit,
  };
}

/** Logs the attempt as pending, timed when it is written (not when its transaction began). */
async function logAttempt(
  db: Pick<pg.PoolClient, "query">,
  logId: string,
  target: DeliveryTarget,
  event: DeliveryEvent,
): Promise<void> {
  await db.query(
    `INSERT INTO webhook_logs (id, webhook_id, event_id, event_type, payload, status, retry_count, delivery_id, created_at)
     VALUES ($1, $2, $3, $4, $5, 'pending', $6, $7, clock_timestamp())`,
    [
      logId,
      target.id,
      event.eventId,
      event.eventType,
      JSON.stringify(event.payload),
      event.retryCount ?? 0,
      event.deliveryId ?? null,
    ],
  );
}

/** Sends the logged attempt and completes its log. */
async function send(
  pool: pg.Pool,
  logId: string,
  target: DeliveryTarget,
  event: DeliveryEvent,
  options: DeliveryOptions,
): Promise<DeliveryResult> {
  const body = JSON.stringify(event.payload);
  const started = performance.now();
  let statusCode: number | null = null;
  let error: string | undefined;
  let refused = false;
  const policy: AddressPolicy = { production: options.production, resolve: options.resolve };
  try {
    parseWebhookUrl(target.url, policy); // scheme and address literals; names are checked when the socket connects
    const response = await fetch(target.url, {
      dispatcher: agentFor(policy),
      method: "POST",
      headers: {
        "content-type": "application/json",
        "user-agent": "licence-approval-webhooks/1",
        ...signDelivery(target.secret, event.eventId, body, options.now?.()),
      },
      body,
      redirect: "manual",
      signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
    });
    statusCode = response.status;
    await response.body?.cancel().catch(() => {});
  } catch (failure) {
    refused = isRefusal(failure);
    error = refused ? "refused: the target is not a public address" : describeFailure(failure);
  }
  const responseTime = refused ? null : Math.round(performance.now() - started);
  const success = statusCode !== null && statusCode >= 200 && statusCode < 300;
  await pool.query(
    `UPDATE webhook_logs SET status = $2, response_status = $3, response_time = $4, error = $5 WHERE id = $1`,
    [logId, success ? "success" : "failed", statusCode, responseTime, error ?? (success ? null : `HTTP ${statusCode}`)],
  );
  return { logId, success, statusCode, responseTime, refused, error };
}

/** undici's fetch says only "fetch failed": the cause says why. */
function describeFailure(failure: unknown): string {
  const error = failure as Error & { cause?: Error & { code?: string } };
  const cause = error.cause ? `: ${error.cause.code ?? error.cause.message}` : "";
  return `${error.message}${cause}`.slice(0, 300);
}
