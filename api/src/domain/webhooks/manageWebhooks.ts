/**
 * Webhooks, as their owners manage them: register, list, find, delete, re-enable, send a signed test delivery, read
 * the delivery log. Departments manage their own webhooks; administrators see all and may register ones without a
 * department, which receive every event. A webhook the caller may not manage is answered as missing (404), so its
 * existence is not revealed.
 *
 * Limits, so that one department key cannot turn the platform into an outbound flooder: at most
 * MAX_WEBHOOKS_PER_DEPARTMENT live webhooks per department (the administrators' webhooks without a department count
 * as one more), no URL twice in one department, and at most TEST_DELIVERIES_PER_MINUTE test deliveries per minute
 * to one department's webhooks. Each is counted under an advisory lock in the transaction that adds the row, so it
 * holds across API processes.
 */
import { randomUUID } from "node:crypto";
import type { DbPool } from "../../db/queryable.ts";
import { audit, type RequestMeta } from "../../stores/auditLog.ts";
import { isAdmin, type Principal } from "../../auth/principal.ts";
import type { Config } from "../../config.ts";
import { withTransaction } from "../../db/transaction.ts";
import { AppError, conflict, forbidden, notFound } from "../errors.ts";
import { enqueueJob, JOB_NAMES } from "../../jobs/jobQueue.ts";
import { deliverIfAdmitted } from "../../webhooks/deliver.ts";
import { checkWebhookUrl, WEBHOOK_URL_REFUSED, webhookAddressPolicy } from "../../webhooks/urlSafety.ts";
import type { SecretSealer } from "../../chain/secretSealer.ts";
import * as store from "../../webhooks/webhookStore.ts";
import { webhookJson, type StoredWebhook, type WebhookLogFilter } from "../../webhooks/webhookStore.ts";

export interface WebhookContext {
  config: Config;
  pool: DbPool;
  webhookSecrets: SecretSealer;
}

export interface NewWebhookInput {
  /** A department's own code (departments), any code or none (administrators: none receives every event). */
  departmentCode?: string;
  url: string;
  events: string[];
  secret: string;
}

const ownCode = (principal: Principal | undefined) => (principal?.kind === "department" ? principal.code : undefined);

/** Live webhooks one department may have (every event is delivered to each of them). */
export const MAX_WEBHOOKS_PER_DEPARTMENT = 10;
/** Test deliveries to one department's webhooks per minute (a sliding minute). */
export const TEST_DELIVERIES_PER_MINUTE = 10;
const MINUTE_MS = 60_000;

export const WEBHOOK_LIMIT_REACHED = "WEBHOOK_LIMIT_REACHED";
export const DUPLICATE_WEBHOOK_URL = "DUPLICATE_WEBHOOK_URL";

/**
 * The form two spellings of one target share: WHATWG parsing (scheme and host in lower case, default port dropped,
 * an empty path as "/", percent-encoding normalised), without the fragment, which is never sent.
 */
export function normalisedWebhookUrl(raw: string): string {
  const url = new URL(raw);
  url.hash = "";
  return url.href;
}

/** The webhook, if the caller may manage it (a department: its own; an administrator: any); otherwise 404. */
export async function findOwnedWebhook(context: WebhookContext, principal: Principal | undefined, id: string) {
  const webhook = await store.findWebhook(context.pool, id);
  const mayManage =
    isAdmin(principal) || (principal?.kind === "department" && webhook?.departmentCode === principal.code);
  if (!webhook || !mayManage) throw notFound("Webhook");
  return webhook;
}

export async function registerWebhook(context: WebhookContext, meta: RequestMeta, input: NewWebhookInput) {
  const principal = meta.principal!;
  const own = ownCode(principal);
  if (own && input.departmentCode && input.departmentCode !== own) {
    throw forbidden("You can only register webhooks for your own department");
  }
  await checkWebhookUrl(input.url, webhookAddressPolicy(context.config));
  const id = randomUUID();
  const departmentCode = own ?? input.departmentCode ?? null;
  const createdAt = await withTransaction(context.pool, async (client) => {
    await store.lockWebhookLimit(client, `webhooks:${departmentCode ?? ""}`);
    await checkRegistrationLimits(client, departmentCode, input.url);
    const created = await store.insertWebhook(client, {
      id,
      departmentCode,
      url: input.url,
      events: input.events,
      secretSealed: context.webhookSecrets.seal(id, input.secret),
      createdBy: `${principal.kind}:${principal.id}`,
    });
    await audit(client, meta, {
      entityType: "WEBHOOK",
      entityId: id,
      action: "CREATE",
      newValue: { departmentCode, url: input.url, events: input.events },
    });
    return created;
  });
  const webhook: StoredWebhook = {
    id,
    departmentCode,
    url: input.url,
    events: input.events,
    isActive: true,
    disabledAt: null,
    createdAt,
  };
  return webhookJson(webhook);
}

/** 409 when the department has its maximum of webhooks already, or one with the same URL. */
async function checkRegistrationLimits(
  client: Parameters<typeof store.webhooksOfDepartment>[0],
  departmentCode: string | null,
  url: string,
): Promise<void> {
  const existing = await store.webhooksOfDepartment(client, departmentCode);
  const target = normalisedWebhookUrl(url);
  const same = existing.find((webhook) => normalisedWebhookUrl(webhook.url) === target);
  if (same) {
    throw conflict(DUPLICATE_WEBHOOK_URL, "This department already has a webhook with this URL", {
      field: "url",
      webhookId: same.id,
    });
  }
  if (existing.length >= MAX_WEBHOOKS_PER_DEPARTMENT) {
    throw conflict(
      WEBHOOK_LIMIT_REACHED,
      `A department may have at most ${MAX_WEBHOOKS_PER_DEPARTMENT} webhooks: delete one to register another`,
      { limit: MAX_WEBHOOKS_PER_DEPARTMENT, departmentCode },
    );
  }
}

/** A department's own webhooks; every webhook for an administrator. */
export async function listOwnWebhooks(context: WebhookContext, principal: Principal | undefined) {
  return { webhooks: (await store.listWebhooks(context.pool, ownCode(principal))).map(webhookJson) };
}

export async function deleteWebhook(context: WebhookContext, meta: RequestMeta, id: string): Promise<void> {
  const webhook = await findOwnedWebhook(context, meta.principal, id);
  await withTransaction(context.pool, async (client) => {
    await store.deleteWebhook(client, webhook.id);
    await audit(client, meta, {
      entityType: "WEBHOOK",
      entityId: webhook.id,
      action: "DELETE",
      oldValue: { url: webhook.url, events: webhook.events },
    });
  });
}

/** Re-enables a webhook disabled after failed deliveries; the deliveries held meanwhile go out now. */
export async function enableWebhook(context: WebhookContext, meta: RequestMeta, id: string) {
  const webhook = await findOwnedWebhook(context, meta.principal, id);
  await withTransaction(context.pool, async (client) => {
    const released = await store.enableWebhook(client, webhook.id);
    for (const deliveryId of released) await enqueueJob(client, JOB_NAMES.deliverWebhook, deliveryId, { deliveryId });
    await audit(client, meta, {
      entityType: "WEBHOOK",
      entityId: webhook.id,
      action: "ENABLE",
      oldValue: { isActive: webhook.isActive },
      newValue: { isActive: true, releasedDeliveries: released.length },
    });
  });
  return webhookJson({ ...webhook, isActive: true, disabledAt: null });
}

/**
 * Sends a signed test payload now. A refused target is 400 INVALID_WEBHOOK_URL with no status and no time, so the
 * test cannot probe internal hosts or ports. Over TEST_DELIVERIES_PER_MINUTE for the webhook's department: 429
 * RATE_LIMITED with Retry-After, and nothing is sent.
 */
export async function testWebhook(context: WebhookContext, principal: Principal | undefined, id: string) {
  const webhook = await findOwnedWebhook(context, principal, id);
  const eventId = `evt_${randomUUID()}`;
  const payload = {
    eventId,
    type: "WEBHOOK_TEST",
    timestamp: new Date().toISOString(),
    webhookId: webhook.id,
    data: { message: "This is a test delivery." },
  };
  // The budget throws 429 rather than declining, so an attempt is always made when this returns.
  const result = (await deliverIfAdmitted(
    context.pool,
    { id: webhook.id, url: webhook.url, secret: context.webhookSecrets.open(webhook.id, webhook.secretSealed) },
    { eventId, eventType: "WEBHOOK_TEST", payload },
    webhookAddressPolicy(context.config),
    testDeliveryBudget(webhook.departmentCode),
  ))!;
  if (result.refused || result.responseTime === null) {
    throw new AppError(400, WEBHOOK_URL_REFUSED, "Webhook URL refused: the target is not a public address");
  }
  return { success: result.success, statusCode: result.statusCode, responseTime: result.responseTime };
}

/** Admits a test delivery while the department's webhooks had fewer than the limit in the last minute; else 429. */
function testDeliveryBudget(departmentCode: string | null) {
  return {
    lock: `tests:${departmentCode ?? ""}`,
    admit: async (client: Parameters<typeof store.recentTestDeliveries>[0]) => {
      const recent = await store.recentTestDeliveries(client, departmentCode, MINUTE_MS);
      if (recent.length < TEST_DELIVERIES_PER_MINUTE) return true;
      // Allowed again when the oldest of the last minute's tests leaves the window.
      const freeAt = recent[recent.length - TEST_DELIVERIES_PER_MINUTE].getTime() + MINUTE_MS;
      const retryAfter = Math.max(1, Math.ceil((freeAt - Date.now()) / 1000));
      throw new AppError(
        429,
        "RATE_LIMITED",
        `Too many test deliveries: at most ${TEST_DELIVERIES_PER_MINUTE} a minute per department; try again in ${retryAfter} s`,
        { retryAfterSeconds: retryAfter, limitPerMinute: TEST_DELIVERIES_PER_MINUTE },
        { "Retry-After": String(retryAfter) },
      );
    },
  };
}

/** Delivery attempts, newest first: a department sees its own webhooks' only. */
export async function webhookLogs(
  context: WebhookContext,
  principal: Principal | undefined,
  query: Omit<WebhookLogFilter, "departmentCode">,
) {
  const { logs, total } = await store.listWebhookLogs(context.pool, { ...query, departmentCode: ownCode(principal) });
  const pagination = { page: query.page, limit: query.limit, total, totalPages: Math.ceil(total / query.limit) };
  return { logs, pagination };
}
