/**
 * Webhook routes: registration (both event sets), listing, deletion, re-enabling, a signed test delivery, and the
 * delivery log. Departments manage their own webhooks; administrators see all and may register ones without a
 * department, which receive every event.
 */
import { randomUUID } from "node:crypto";
import { z } from "zod/v4";
import { audit, requestMeta } from "../audit/auditLog.ts";
import { isAdmin, type Principal } from "../auth/principal.ts";
import { withTransaction } from "../db/transaction.ts";
import type { DomainContext } from "../domain/context.ts";
import { AppError, forbidden, notFound } from "../errors.ts";
import { defineRoute, errorResponses, type RouteDefinition } from "../http/routeTable.ts";
import { pageQuery } from "../schemas/common.ts";
import { enqueueJob, JOB_NAMES } from "../jobs/jobQueue.ts";
import { deliver } from "../webhooks/deliver.ts";
import { WEBHOOK_EVENTS } from "../webhooks/events.ts";
import { checkWebhookUrl, WEBHOOK_URL_REFUSED } from "../webhooks/urlSafety.ts";
import { findWebhook, listWebhooks, webhookJson, type StoredWebhook } from "../webhooks/webhookStore.ts";

const WebhookSchema = z
  .object({ webhookId: z.uuid(), departmentCode: z.string().nullable(), url: z.url(), events: z.array(z.enum(WEBHOOK_EVENTS)), isActive: z.boolean(), createdAt: z.iso.datetime({ offset: true }) })
  .meta({ id: "Webhook" });
const WebhookLogSchema = z
  .object({
    logId: z.uuid(), webhookId: z.uuid(), eventId: z.string(), eventType: z.string(), payload: z.record(z.string(), z.unknown()),
    status: z.enum(["pending", "success", "failed"]), responseStatus: z.int().nullable(), responseTime: z.int().nullable(), retryCount: z.int(), createdAt: z.iso.datetime({ offset: true }),
    error: z.string().nullable().describe("Why the attempt failed (network error or HTTP status)"),
    nextRetryAt: z.iso.datetime({ offset: true }).nullable().describe("When the failed attempt is retried (null: delivered, last retry, or a test delivery)"),
  })
  .meta({ id: "WebhookLog" });
const CreateWebhookInput = z
  .object({
    departmentCode: z.string().regex(/^[A-Z_]+$/).optional().describe("Your own code (departments); any code or none (administrators: none receives every event)"),
    url: z.url().max(2048),
    events: z.array(z.enum(WEBHOOK_EVENTS)).min(1).max(WEBHOOK_EVENTS.length),
    secret: z.string().min(16).max(256).describe("HMAC key of the signatures (at least 16 characters)"),
  })
  .meta({ id: "CreateWebhookInput" });
const WebhookIdParams = z.object({ webhookId: z.uuid() });
const KEY_OR_ADMIN = [{ kind: "apiKey" as const }, { kind: "admin" as const }];

export function webhookRoutes(context: DomainContext): RouteDefinition[] {
  // Loopback receivers are a development convenience: allowed only where DEV_CONVENIENCES is on (never in production).
  const production = context.config.nodeEnv === "production" || !context.config.devConveniences;
  /** The webhook, if the caller may manage it (a department: its own; an administrator: any); otherwise 404. */
  const owned = async (principal: Principal | undefined, id: string) => {
    const webhook = await findWebhook(context.pool, id);
    if (!webhook || (!isAdmin(principal) && (principal?.kind !== "department" || webhook.departmentCode !== principal.code))) throw notFound("Webhook");
    return webhook;
  };
  const ownCode = (principal: Principal | undefined) => (principal?.kind === "department" ? principal.code : undefined);

  return [
    defineRoute({
      method: "post",
      path: "/webhooks",
      operationId: "createWebhook",
      summary: "Register a webhook",
      description:
        "Accepts event names of both sets of the specification (APPROVAL_REQUIRED … and application.submitted …). Deliveries are signed: X-Webhook-Signature: sha256=<hex HMAC-SHA256 of the body with the secret>, plus the Standard Webhooks headers webhook-id (the event id: de-duplicate on it, delivery is at least once), webhook-timestamp and webhook-signature. Only http(s); in production only public unicast addresses (IPv4-mapped, NAT64, link-local, reserved and other special ranges are refused), checked at registration and again on the address each connection is made to; redirects are not followed. Receivers should check webhook-timestamp within a tolerance (e.g. 5 minutes) and de-duplicate on webhook-id to refuse replays: X-Webhook-Signature alone carries no timestamp.",
      tags: ["Webhooks"],
      access: KEY_OR_ADMIN,
      body: CreateWebhookInput,
      idempotent: false,
      responses: { 201: { description: "Registered", schema: WebhookSchema }, ...errorResponses({ 400: "Invalid body or INVALID_WEBHOOK_URL", 401: "Not authenticated", 403: "Another department's code" }) },
      handler: async ({ body, ctx }) => {
        const principal = ctx.state.principal;
        const own = ownCode(principal);
        if (own && body.departmentCode && body.departmentCode !== own) throw forbidden("You can only register webhooks for your own department");
        await checkWebhookUrl(body.url, { production });
        const id = randomUUID();
        const departmentCode = own ?? body.departmentCode ?? null;
        const createdAt = await withTransaction(context.pool, async (client) => {
          const { rows } = await client.query(
            `INSERT INTO webhooks (id, department_code, url, events, secret_sealed, created_by) VALUES ($1, $2, $3, $4, $5, $6) RETURNING created_at`,
            [id, departmentCode, body.url, body.events, context.webhookSecrets.seal(id, body.secret), `${principal!.kind}:${principal!.id}`],
          );
          await audit(client, requestMeta(ctx), { entityType: "WEBHOOK", entityId: id, action: "CREATE", newValue: { departmentCode, url: body.url, events: body.events } });
          return rows[0].created_at as Date;
        });
        const created: StoredWebhook = { id, departmentCode, url: body.url, events: body.events, isActive: true, disabledAt: null, createdAt };
        return { status: 201, body: webhookJson(created) };
      },
    }),
    defineRoute({
      method: "get",
      path: "/webhooks",
      operationId: "listWebhooks",
      summary: "Webhooks: a department's own, or all for administrators",
      tags: ["Webhooks"],
      access: KEY_OR_ADMIN,
      responses: { 200: { description: "Webhooks", schema: z.object({ webhooks: z.array(WebhookSchema) }) }, ...errorResponses({ 401: "Not authenticated" }) },
      handler: async ({ ctx }) => ({ body: { webhooks: (await listWebhooks(context.pool, ownCode(ctx.state.principal))).map(webhookJson) } }),
    }),
    defineRoute({
      method: "get",
      path: "/webhooks/logs",
      operationId: "listWebhookLogs",
      summary: "Delivery attempts, newest first",
      tags: ["Webhooks"],
      access: KEY_OR_ADMIN,
      query: z.object({ webhookId: z.uuid().optional(), status: z.enum(["success", "failed", "pending"]).optional(), ...pageQuery(50) }),
      responses: { 200: { description: "Logs", schema: z.object({ logs: z.array(WebhookLogSchema), pagination: z.object({ page: z.int(), limit: z.int(), total: z.int(), totalPages: z.int() }) }) }, ...errorResponses({ 401: "Not authenticated" }) },
      handler: async ({ query, ctx }) => {
        const where: string[] = [];
        const params: unknown[] = [];
        const own = ownCode(ctx.state.principal);
        if (own) where.push(`w.department_code = $${params.push(own)}`);
        if (query.webhookId) where.push(`l.webhook_id = $${params.push(query.webhookId)}`);
        if (query.status) where.push(`l.status = $${params.push(query.status)}`);
        const whereSql = where.length ? `WHERE ${where.join(" AND ")}` : "";
        const total = (await context.pool.query(`SELECT count(*)::int AS n FROM webhook_logs l JOIN webhooks w ON w.id = l.webhook_id ${whereSql}`, params)).rows[0].n as number;
        const { rows } = await context.pool.query(
          `SELECT l.* FROM webhook_logs l JOIN webhooks w ON w.id = l.webhook_id ${whereSql} ORDER BY l.created_at DESC, l.id LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
          [...params, query.limit, (query.page - 1) * query.limit],
        );
        return {
          body: {
            logs: rows.map((r) => ({
              logId: r.id, webhookId: r.webhook_id, eventId: r.event_id, eventType: r.event_type, payload: r.payload, status: r.status,
              responseStatus: r.response_status, responseTime: r.response_time, retryCount: r.retry_count, createdAt: r.created_at.toISOString(),
              error: r.error ?? null, nextRetryAt: r.next_retry_at?.toISOString() ?? null,
            })),
            pagination: { page: query.page, limit: query.limit, total, totalPages: Math.ceil(total / query.limit) },
          },
        };
      },
    }),
    defineRoute({
      method: "delete",
      path: "/webhooks/:webhookId",
      operationId: "deleteWebhook",
      summary: "Delete a webhook (its delivery logs are kept)",
      tags: ["Webhooks"],
      access: KEY_OR_ADMIN,
      params: WebhookIdParams,
      responses: { 204: { description: "Deleted" }, ...errorResponses({ 401: "Not authenticated", 404: "No such webhook (or not yours)" }) },
      handler: async ({ params, ctx }) => {
        const webhook = await owned(ctx.state.principal, params.webhookId);
        await withTransaction(context.pool, async (client) => {
          await client.query(`UPDATE webhooks SET deleted_at = now(), is_active = false WHERE id = $1`, [webhook.id]);
          // What it had pending is not delivered any more.
          await client.query(`UPDATE webhook_deliveries SET status = 'CANCELLED', updated_at = now() WHERE webhook_id = $1 AND status IN ('PENDING', 'HELD')`, [webhook.id]);
          await audit(client, requestMeta(ctx), { entityType: "WEBHOOK", entityId: webhook.id, action: "DELETE", oldValue: { url: webhook.url, events: webhook.events } });
        });
        return { status: 204 };
      },
    }),
    defineRoute({
      method: "post",
      path: "/webhooks/:webhookId/enable",
      operationId: "enableWebhook",
      summary: "Re-enable a webhook disabled after failed deliveries",
      description: "Deliveries held while it was disabled are sent now. The delivery whose last retry failed stays failed (see the delivery log).",
      tags: ["Webhooks"],
      access: KEY_OR_ADMIN,
      params: WebhookIdParams,
      responses: { 200: { description: "Enabled", schema: WebhookSchema }, ...errorResponses({ 401: "Not authenticated", 404: "No such webhook (or not yours)" }) },
      handler: async ({ params, ctx }) => {
        const webhook = await owned(ctx.state.principal, params.webhookId);
        await withTransaction(context.pool, async (client) => {
          await client.query(`UPDATE webhooks SET is_active = true, disabled_at = NULL, disabled_reason = NULL WHERE id = $1`, [webhook.id]);
          // Deliveries held while it was disabled go out now.
          const held = await client.query(
            `UPDATE webhook_deliveries SET status = 'PENDING', next_attempt_at = NULL, updated_at = now() WHERE webhook_id = $1 AND status = 'HELD' RETURNING id`,
            [webhook.id],
          );
          for (const row of held.rows) await enqueueJob(client, JOB_NAMES.deliverWebhook, row.id, { deliveryId: row.id });
          await audit(client, requestMeta(ctx), {
            entityType: "WEBHOOK", entityId: webhook.id, action: "ENABLE", oldValue: { isActive: webhook.isActive }, newValue: { isActive: true, releasedDeliveries: held.rowCount },
          });
        });
        return { body: webhookJson({ ...webhook, isActive: true, disabledAt: null }) };
      },
    }),
    defineRoute({
      method: "post",
      path: "/webhooks/:webhookId/test",
      operationId: "testWebhook",
      summary: "Send a signed test payload to the webhook now",
      tags: ["Webhooks"],
      access: KEY_OR_ADMIN,
      params: WebhookIdParams,
      idempotent: false,
      description:
        "A target whose address is not allowed (in production: anything but a public unicast address, checked on the address the connection is made to) is answered 400 INVALID_WEBHOOK_URL, with no status and no time, so the test cannot probe internal hosts or ports.",
      responses: {
        200: { description: "Attempt made", schema: z.object({ success: z.boolean(), statusCode: z.int().nullable(), responseTime: z.int() }) },
        ...errorResponses({ 400: "INVALID_WEBHOOK_URL: the target's address is refused", 401: "Not authenticated", 404: "No such webhook (or not yours)" }),
      },
      handler: async ({ params, ctx }) => {
        const webhook = await owned(ctx.state.principal, params.webhookId);
        const eventId = `evt_${randomUUID()}`;
        const result = await deliver(
          context.pool,
          { id: webhook.id, url: webhook.url, secret: context.webhookSecrets.open(webhook.id, webhook.secretSealed) },
          { eventId, eventType: "WEBHOOK_TEST", payload: { eventId, type: "WEBHOOK_TEST", timestamp: new Date().toISOString(), webhookId: webhook.id, data: { message: "This is a test delivery." } } },
          { production },
        );
        if (result.refused || result.responseTime === null) throw new AppError(400, WEBHOOK_URL_REFUSED, "Webhook URL refused: the target is not a public address");
        return { body: { success: result.success, statusCode: result.statusCode, responseTime: result.responseTime } };
      },
    }),
  ];
}
