/**
 * One delivery attempt: the attempt is logged (pending) before the request is sent, then completed with the
 * receiver's status and time. JSON body, signed headers, 10 s timeout, redirects not followed, any 2xx is success.
 * The connection goes through the guarded agent (urlSafety.ts), so the address checked is the address connected to;
 * a refused target is reported as `refused`, with no status and no time (no port-scanning oracle).
 */
import { randomUUID } from "node:crypto";
import type pg from "pg";
import { fetch, type Agent } from "undici";
import { guardedAgent, parseWebhookUrl, RefusedAddressError, type AddressPolicy } from "./urlSafety.ts";
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

export async function deliver(
  pool: pg.Pool,
  target: DeliveryTarget,
  event: { eventId: string; eventType: string; payload: unknown; retryCount?: number; deliveryId?: string },
  options: AddressPolicy & { now?: () => Date },
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
