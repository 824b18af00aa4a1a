/**
 * Builds the OpenAPI 3.1 document from the route table with zod-openapi: paths, parameters, bodies, responses and
 * security come from the same Zod schemas that validate requests; schemas with a `.meta({ id })` become components.
 */
import { z } from "zod/v4";
import { createDocument, type ZodOpenApiOperationObject, type ZodOpenApiPathsObject } from "zod-openapi";
import { webhookDocs } from "../webhooks/payloads.ts";
import { ErrorSchema, honoursIdempotencyKey, type AccessRule, type RouteDefinition } from "./routeTable.ts";
import { documentedStatuses } from "./routeStatuses.ts";
import { OAuthErrorSchema } from "../auth/oauthErrors.ts";
import { IDEMPOTENCY_WINDOW_HOURS } from "./idempotency.ts";

const IDEMPOTENCY_KEY_PARAMETER = {
  name: "Idempotency-Key",
  in: "header" as const,
  required: false,
  description: `Makes a retry safe: the same key with the same request within ${IDEMPOTENCY_WINDOW_HOURS} h replays the first response (header Idempotent-Replayed: true) and does nothing else; with a different request → 422; while the first is still running → 409.`,
  schema: { type: "string" as const, pattern: "^[\\x21-\\x7e]{1,255}$" },
};

/** This service's document: its routes at the root and under `prefix`, with its title, decisions and webhooks. */
export function serviceOpenApiDocument(input: {
  prefix: string;
  version: string;
  routes: RouteDefinition[];
  rootRoutes: RouteDefinition[];
  publicBaseUrl: string;
  decisions?: string;
}): Record<string, unknown> {
  const paths: ZodOpenApiPathsObject = {};
  for (const [prefix, routes] of [
    ["", input.rootRoutes],
    [input.prefix, input.routes],
  ] as const)
    for (const route of routes)
      (paths[(prefix + route.path).replace(/:(\w+)/g, "{$1}")] ??= {})[route.method] = operationOf(route);
  const hooks = webhookDocs();
  return createDocument({
    openapi: "3.1.0",
    info: {
      title: "Licence Approval Service",
      version: input.version,
      description: [
        "Multi-department approval of licences and permits on a permissioned blockchain. Every error has the body {code, message, details?}.",
        // Every point the interface specification leaves "not shown", as decided (docs/decisions.md).
        ...(input.decisions ? [input.decisions] : []),
      ].join("\n\n"),
      // package.json is private and the repository grants no licence (an SPDX LicenseRef names one of our own).
      license: { name: "Proprietary: all rights reserved", identifier: "LicenseRef-Proprietary" },
    },
    servers: [{ url: input.publicBaseUrl }],
    paths,
    webhooks: Object.fromEntries(hooks.map((hook) => [hook.name, { post: webhookOperation(hook) }])),
    components: {
      // The webhook payloads are rendered as we send them (output), referenced by their requests' bodies.
      schemas: Object.fromEntries(
        [ErrorSchema, OAuthErrorSchema, ...hooks.map((h) => h.schema)].map((s) => [idOf(s), s]),
      ),
      securitySchemes: SECURITY_SCHEMES,
    },
  }) as unknown as Record<string, unknown>;
}

function operationOf(route: RouteDefinition): ZodOpenApiOperationObject {
  const contentType =
    route.bodyType === "multipart"
      ? "multipart/form-data"
      : route.bodyType === "form"
        ? "application/x-www-form-urlencoded"
        : "application/json";
  // Only an object schema names parameters.
  const requestParams = Object.fromEntries(
    Object.entries({ path: route.params, query: route.query }).filter(([, schema]) => schema instanceof z.ZodObject),
  );
  return {
    operationId: route.operationId,
    summary: route.summary,
    description: [route.description, describeAccess(route.access)].filter(Boolean).join("\n\n"),
    tags: route.tags,
    security: security(route.access),
    ...(Object.keys(requestParams).length ? { requestParams } : {}), // else it adds `parameters: []`
    ...(honoursIdempotencyKey(route) ? { parameters: [IDEMPOTENCY_KEY_PARAMETER] } : {}),
    ...(route.body ? { requestBody: { required: true, content: { [contentType]: { schema: route.body } } } } : {}),
    // Every status the operation can answer: its handler's and the middleware's (routeStatuses.ts).
    responses: Object.fromEntries(
      Object.entries(documentedStatuses(route)).map(([status, spec]) => [
        status,
        {
          description: spec.description,
          headers: spec.headers,
          content: spec.schemas.length
            ? { [spec.contentType ?? "application/json"]: { schema: oneOf(spec.schemas) } }
            : undefined,
        },
      ]),
    ),
  };
}

/** Several bodies of one status (e.g. the spec's Error and an OAuth error) are alternatives: exactly one applies. */
function oneOf(schemas: z.ZodType[]): z.ZodType {
  if (schemas.length === 1) return schemas[0];
  return z.union(schemas as [z.ZodType, z.ZodType]).meta({ unionOneOf: true });
}

const idOf = (schema: z.ZodType) => z.globalRegistry.get(schema)!.id!;

const WEBHOOK_SIGNATURE_HEADERS = (
  [
    ["X-Webhook-Signature", "sha256=<lowercase hex HMAC-SHA256 of the exact body, keyed with the registered secret>"],
    ["webhook-id", "The event id (Standard Webhooks): the same at every retry"],
    ["webhook-timestamp", "Unix seconds of this attempt (Standard Webhooks)"],
    [
      "webhook-signature",
      "v1,<base64 HMAC-SHA256 of id.timestamp.body> (Standard Webhooks; key: the secret's UTF-8 bytes)",
    ],
  ] as const
).map(([name, description]) => ({
  name,
  in: "header" as const,
  required: true,
  schema: { type: "string" as const },
  description,
}));

/** OpenAPI 3.1 `webhooks`: one POST we send per event name. */
function webhookOperation(hook: ReturnType<typeof webhookDocs>[number]): ZodOpenApiOperationObject {
  return {
    operationId: `webhook_${hook.name.replace(/\W/g, "_")}`,
    // Sent by us: the receiver authenticates it by its signature headers, not by any of our schemes.
    security: [],
    summary: hook.summary,
    description:
      "Sent to every registered webhook subscribed to this name whose department the event concerns (administrators' webhooks without a department get all). Any 2xx is success; otherwise retried at +1 min, +5 min, +30 min, +2 h and +24 h, then the webhook is disabled.",
    parameters: WEBHOOK_SIGNATURE_HEADERS,
    requestBody: {
      required: true,
      content: { "application/json": { schema: { $ref: `#/components/schemas/${idOf(hook.schema)}` } } },
    },
    responses: { "2XX": { description: "Received" } },
  };
}

const SECURITY_SCHEMES = {
  BearerAuth: {
    type: "http",
    scheme: "bearer",
    bearerFormat: "JWT",
    description: "Applicant (identity-locker login) or system client (client credentials) token.",
  },
  ApiKeyAuth: {
    type: "apiKey",
    in: "header",
    name: "X-API-Key",
    description: "Department API key, sent with X-Department-Code.",
  },
  AdminAuth: { type: "http", scheme: "bearer", bearerFormat: "JWT", description: "Token with the admin scope." },
} as const;

/** An access rule in the document: its security requirement, and who it admits in words. */
function documented(rule: AccessRule): [requirement: Record<string, string[]>, words: string] {
  if (rule.kind === "applicant") return [{ BearerAuth: [] }, "an applicant (identity-locker token)"];
  if (rule.kind === "client") return [{ BearerAuth: [rule.scope] }, `a system client with scope \`${rule.scope}\``];
  if (rule.kind === "apiKey") return [{ ApiKeyAuth: [] }, "a department (X-API-Key + X-Department-Code)"];
  return [{ AdminAuth: ["admin"] }, "an administrator (token with scope `admin`)"];
}

function security(access: AccessRule[]): Record<string, string[]>[] {
  if (access.some((rule) => rule.kind === "public")) return [];
  // One entry per distinct requirement.
  return [...new Map(access.map((rule) => documented(rule)[0]).map((a) => [JSON.stringify(a), a])).values()];
}

/** Who may call, in words, appended to each operation's description. */
function describeAccess(access: AccessRule[]): string {
  if (access.some((rule) => rule.kind === "public")) return "Access: anyone (no authentication).";
  const words = access.map((rule) => documented(rule)[1]);
  return `Access: ${words.join(", or ")}. An admin token carries every scope.`;
}
