/**
 * Webhook routes over the webhook use case (domain/webhooks/manageWebhooks.ts): registration (both event sets),
 * listing, deletion, re-enabling, a signed test delivery, and the delivery log.
 */
import { z } from "zod/v4";
import type { DomainContext } from "../domain/context.ts";
import {
  deleteWebhook,
  DUPLICATE_WEBHOOK_URL,
  enableWebhook,
  listOwnWebhooks,
  MAX_WEBHOOKS_PER_DEPARTMENT,
  registerWebhook,
  TEST_DELIVERIES_PER_MINUTE,
  testWebhook,
  WEBHOOK_LIMIT_REACHED,
  webhookLogs,
  type WebhookContext,
} from "../domain/webhooks/manageWebhooks.ts";
import { routeGroup, type RouteDefinition } from "../http/routeTable.ts";
import { pageQuery } from "./schemas/common.ts";
import { WEBHOOK_EVENTS } from "../webhooks/events.ts";
import { MAX_DELIVERIES_PER_HOST } from "../webhooks/deliver.ts";
import { MIN_WHSEC_KEY_BYTES, whsecProblem } from "../webhooks/signing.ts";

const route = routeGroup({
  tags: ["Webhooks"],
  access: [{ kind: "apiKey" }, { kind: "admin" }],
  responses: { 401: "Not authenticated" },
});

const WebhookSchema = z
  .object({
    webhookId: z.uuid(),
    departmentCode: z.string().nullable(),
    url: z.url(),
    events: z.array(z.enum(WEBHOOK_EVENTS)),
    isActive: z.boolean(),
    createdAt: z.iso.datetime({ offset: true }),
  })
  .meta({ id: "Webhook" });
const WebhookLogSchema = z
  .object({
    logId: z.uuid(),
    webhookId: z.uuid(),
    eventId: z.string(),
    eventType: z.string(),
    payload: z.record(z.string(), z.unknown()),
    status: z.enum(["pending", "success", "failed"]),
    responseStatus: z.int().nullable(),
    responseTime: z.int().nullable(),
    retryCount: z.int(),
    createdAt: z.iso.datetime({ offset: true }),
    error: z.string().nullable().describe("Why the attempt failed (network error or HTTP status)"),
    nextRetryAt: z.iso
      .datetime({ offset: true })
      .nullable()
      .describe("When the failed attempt is retried (null: delivered, last retry, or a test delivery)"),
  })
  .meta({ id: "WebhookLog" });
const CreateWebhookInput = z
  .object({
    departmentCode: z
      .string()
      .regex(/^[A-Z_]+$/)
      .optional()
      .describe("Your own code (departments); any code or none (administrators: none receives every event)"),
    url: z.url().max(2048),
    events: z.array(z.enum(WEBHOOK_EVENTS)).min(1).max(WEBHOOK_EVENTS.length),
    secret: z
      .string()
      .min(16)
      .max(256)
      .superRefine((secret, ctx) => {
        const problem = whsecProblem(secret);
        if (problem) ctx.addIssue({ code: "custom", message: problem });
      })
      .describe(
        `HMAC key of the signatures: at least 16 characters; a Standard Webhooks secret (whsec_ + base64) must be canonical base64 of at least ${MIN_WHSEC_KEY_BYTES} bytes`,
      ),
  })
  .meta({ id: "CreateWebhookInput" });
const WebhookIdParams = z.object({ webhookId: z.uuid() });

export function webhookRoutes(domain: DomainContext): RouteDefinition[] {
  // The webhook use case needs only these: its secrets are sealed and opened by the context's webhookSecrets sealer.
  const context: WebhookContext = { config: domain.config, pool: domain.pool, webhookSecrets: domain.webhookSecrets };
  return [
    route.post("/webhooks", "createWebhook", {
      summary: "Register a webhook",
      description: `Accepts event names of both sets of the specification (APPROVAL_REQUIRED … and application.submitted …). Deliveries are signed: X-Webhook-Signature: sha256=<hex HMAC-SHA256 of the body with the secret>, plus the Standard Webhooks headers webhook-id (the event id: de-duplicate on it, delivery is at least once), webhook-timestamp and webhook-signature. Only http(s); in production only public unicast addresses (IPv4-mapped, NAT64, link-local, reserved and other special ranges are refused), checked at registration and again on the address each connection is made to; redirects are not followed. Receivers should check webhook-timestamp within a tolerance (e.g. 5 minutes) and de-duplicate on webhook-id to refuse replays: X-Webhook-Signature alone carries no timestamp. A department has at most ${MAX_WEBHOOKS_PER_DEPARTMENT} webhooks (the administrators' webhooks without a department count as one more department), each URL once (compared after normalisation: scheme and host case, default port, fragment); at most ${MAX_DELIVERIES_PER_HOST} deliveries to one host are in flight at once, the others wait their turn.`,
      body: CreateWebhookInput,
      idempotent: false,
      responses: {
        201: { description: "Registered", schema: WebhookSchema },
        400: "Invalid body (VALIDATION_ERROR naming the field, e.g. a whsec_ secret that is not base64 of 24 bytes or more) or INVALID_WEBHOOK_URL",
        403: "Another department's code",
        409: `${WEBHOOK_LIMIT_REACHED}: the department has ${MAX_WEBHOOKS_PER_DEPARTMENT} webhooks already (details.limit); ${DUPLICATE_WEBHOOK_URL}: it has one with this URL (details.webhookId)`,
      },
      handler: async ({ body, meta }) => ({ body: await registerWebhook(context, meta, body) }),
    }),
    route.get("/webhooks", "listWebhooks", {
      summary: "Webhooks: a department's own, or all for administrators",
      responses: { 200: { description: "Webhooks", schema: z.object({ webhooks: z.array(WebhookSchema) }) } },
      handler: async ({ principal }) => ({ body: await listOwnWebhooks(context, principal) }),
    }),
    route.get("/webhooks/logs", "listWebhookLogs", {
      summary: "Delivery attempts, newest first",
      query: z.object({
        webhookId: z.uuid().optional(),
        status: z.enum(["success", "failed", "pending"]).optional(),
        ...pageQuery(50),
      }),
      responses: {
        200: {
          description: "Logs",
          schema: z.object({
            logs: z.array(WebhookLogSchema),
            pagination: z.object({ page: z.int(), limit: z.int(), total: z.int(), totalPages: z.int() }),
          }),
        },
      },
      handler: async ({ query, principal }) => ({ body: await webhookLogs(context, principal, query) }),
    }),
    route.delete("/webhooks/:webhookId", "deleteWebhook", {
      summary: "Delete a webhook (its delivery logs are kept)",
      params: WebhookIdParams,
      responses: { 204: "Deleted", 404: "No such webhook (or not yours)" },
      handler: async ({ params, meta }) => {
        await deleteWebhook(context, meta, params.webhookId);
        return {};
      },
    }),
    route.post("/webhooks/:webhookId/enable", "enableWebhook", {
      summary: "Re-enable a webhook disabled after failed deliveries",
      description:
        "Deliveries held while it was disabled are sent now. The delivery whose last retry failed stays failed (see the delivery log).",
      params: WebhookIdParams,
      responses: { 200: { description: "Enabled", schema: WebhookSchema }, 404: "No such webhook (or not yours)" },
      handler: async ({ params, meta }) => ({ body: await enableWebhook(context, meta, params.webhookId) }),
    }),
    route.post("/webhooks/:webhookId/test", "testWebhook", {
      summary: "Send a signed test payload to the webhook now",
      params: WebhookIdParams,
      idempotent: false,
      description: `A target whose address is not allowed (in production: anything but a public unicast address, checked on the address the connection is made to) is answered 400 INVALID_WEBHOOK_URL, with no status and no time, so the test cannot probe internal hosts or ports. At most ${TEST_DELIVERIES_PER_MINUTE} test deliveries a minute to one department's webhooks (every API process counts); more is 429 RATE_LIMITED with Retry-After.`,
      responses: {
        200: {
          description: "Attempt made",
          schema: z.object({ success: z.boolean(), statusCode: z.int().nullable(), responseTime: z.int() }),
        },
        400: "INVALID_WEBHOOK_URL: the target's address is refused",
        404: "No such webhook (or not yours)",
        429: `RATE_LIMITED: more than ${TEST_DELIVERIES_PER_MINUTE} test deliveries in a minute for the department (Retry-After)`,
      },
      handler: async ({ params, principal }) => ({ body: await testWebhook(context, principal, params.webhookId) }),
    }),
  ];
}
