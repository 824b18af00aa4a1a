/**
 * Webhooks, as their owners manage them: register, list, find, delete, re-enable, send a signed test delivery, read
 * the delivery log. Departments manage their own webhooks; administrators see all and may register ones without a
 * department, which receive every event. A webhook the caller may not manage is answered as missing (404), so its
 * existence is not revealed.
 */
import { randomUUID } from "node:crypto";
import type { DbPool } from "../../db/queryable.ts";
import { audit, type RequestMeta } from "../../audit/auditLog.ts";
import { isAdmin, type Principal } from "../../auth/principal.ts";
import type { Config } from "../../config.ts";
import { withTransaction } from "../../db/transaction.ts";
import { AppError, forbidden, notFound } from "../../errors.ts";
import { enqueueJob, JOB_NAMES } from "../../jobs/jobQueue.ts";
import { deliver } from "../../webhooks/deliver.ts";
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
 * test cannot probe internal hosts or ports.
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
  const result = await deliver(
    context.pool,
    { id: webhook.id, url: webhook.url, secret: context.webhookSecrets.open(webhook.id, webhook.secretSealed) },
    { eventId, eventType: "WEBHOOK_TEST", payload },
    webhookAddressPolicy(context.config),
  );
  if (result.refused || result.responseTime === null) {
    throw new AppError(400, WEBHOOK_URL_REFUSED, "Webhook URL refused: the target is not a public address");
  }
  return { success: result.success, statusCode: result.statusCode, responseTime: result.responseTime };
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
