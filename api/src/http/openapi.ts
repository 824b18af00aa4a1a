/**
 * Builds the OpenAPI 3.1 document from the route table: paths, parameters, bodies, responses and security come
 * from the same Zod schemas that validate requests; schemas with a `.meta({ id })` become shared components.
 */
import { z } from "zod/v4";
import { webhookDocs } from "../webhooks/payloads.ts";
import { ErrorSchema, type AccessRule, type RouteDefinition } from "./routeTable.ts";
import { documentedStatuses, honoursIdempotencyKey } from "./routeStatuses.ts";
import { OAuthErrorSchema } from "../auth/oauthErrors.ts";
import { IDEMPOTENCY_WINDOW_HOURS } from "./idempotency.ts";

const IDEMPOTENCY_KEY_PARAMETER = {
  name: "Idempotency-Key",
  in: "header",
  required: false,
  description: `Makes a retry safe: the same key with the same request within ${IDEMPOTENCY_WINDOW_HOURS} h replays the first response (header Idempotent-Replayed: true) and does nothing else; with a different request → 422; while the first is still running → 409.`,
  schema: { type: "string", pattern: "^[\\x21-\\x7e]{1,255}$" },
};

export interface OpenApiInfo {
  title: string;
  version: string;
  description: string;
  serverUrl: string;
  /** Markdown sections appended to the description (decisions, signing rules...). */
  extraSections?: string[];
  /** The licence under which the API and this description are offered (OpenAPI `info.license`). */
  license?: { name: string; identifier?: string; url?: string };
  /** Outgoing webhook deliveries (OpenAPI 3.1 `webhooks`), one per event name. */
  webhooks?: { name: string; summary: string; schema: z.ZodType }[];
}

type Json = Record<string, unknown>;

/** This service's document: its routes at the root and under `prefix`, with its title, decisions and webhooks. */
export function serviceOpenApiDocument(input: {
  prefix: string;
  version: string;
  routes: RouteDefinition[];
  rootRoutes: RouteDefinition[];
  publicBaseUrl: string;
  decisions?: string;
}): Json {
  return buildOpenApiDocument(
    [
      { prefix: "", routes: input.rootRoutes },
      { prefix: input.prefix, routes: input.routes },
    ],
    {
      title: "Licence Approval Service",
      version: input.version,
      description:
        "Multi-department approval of licences and permits on a permissioned blockchain. Every error has the body {code, message, details?}.",
      serverUrl: input.publicBaseUrl,
      // Every point the interface specification leaves "not shown", as decided (docs/decisions.md).
      extraSections: input.decisions ? [input.decisions] : [],
      webhooks: webhookDocs(),
      // package.json is private and the repository grants no licence (an SPDX LicenseRef names one of our own).
      license: { name: "Proprietary: all rights reserved", identifier: "LicenseRef-Proprietary" },
    },
  );
}

export function buildOpenApiDocument(routes: { prefix: string; routes: RouteDefinition[] }[], info: OpenApiInfo): Json {
  const components: Record<string, unknown> = {};
  const convert = schemaConverter(components);
  // Conversion order is the components' order: the operations', the error bodies', then the webhooks'.
  const paths = pathsOf(routes, convert);
  convert(ErrorSchema, "output");
  convert(OAuthErrorSchema, "output");
  const webhooks = webhookOperations(info.webhooks ?? [], convert);
  return {
    openapi: "3.1.0",
    info: {
      title: info.title,
      version: info.version,
      description: [info.description, ...(info.extraSections ?? [])].join("\n\n"),
      ...(info.license ? { license: info.license } : {}),
    },
    servers: [{ url: info.serverUrl }],
    paths,
    ...(info.webhooks?.length ? { webhooks } : {}),
    components: { schemas: components, securitySchemes: SECURITY_SCHEMES },
  };
}

type Convert = (schema: z.ZodType, io: "input" | "output") => Json;

/** Zod schema → JSON Schema; schemas with a `.meta({ id })` (and their $defs) are added to `components` once. */
function schemaConverter(components: Record<string, unknown>): Convert {
  return (schema, io) => {
    const json = z.toJSONSchema(schema, { io, unrepresentable: "any", target: "draft-2020-12" }) as Json;
    const defs = (json.$defs ?? {}) as Record<string, Json>;
    for (const [name, def] of Object.entries(defs)) components[name] ??= clean(def);
    delete json.$defs;
    const id = (z.globalRegistry.get(schema) as { id?: string } | undefined)?.id;
    const cleaned = clean(json);
    if (id) {
      components[id] ??= cleaned;
      return { $ref: `#/components/schemas/${id}` };
    }
    return cleaned;
  };
}

function pathsOf(
  routes: { prefix: string; routes: RouteDefinition[] }[],
  convert: Convert,
): Record<string, Record<string, unknown>> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const group of routes) {
    for (const route of group.routes) {
      const path = (group.prefix + route.path).replace(/:(\w+)/g, "{$1}");
      (paths[path] ??= {})[route.method] = operationOf(route, convert);
    }
  }
  return paths;
}

function operationOf(route: RouteDefinition, convert: Convert): Json {
  const parameters = [
    ...objectParameters(route.params, "path", convert),
    ...objectParameters(route.query, "query", convert),
    ...(honoursIdempotencyKey(route) ? [IDEMPOTENCY_KEY_PARAMETER] : []),
  ];
  return {
    operationId: route.operationId,
    summary: route.summary,
    description: [route.description, describeAccess(route.access)].filter(Boolean).join("\n\n"),
    tags: route.tags,
    security: security(route.access),
    ...(parameters.length ? { parameters } : {}),
    ...(route.body ? { requestBody: requestBody(route, convert) } : {}),
    responses: responsesOf(route, convert),
  };
}

/** Every status the operation can answer: its handler's and the middleware's (routeStatuses.ts). */
function responsesOf(route: RouteDefinition, convert: Convert): Json {
  return Object.fromEntries(
    Object.entries(documentedStatuses(route)).map(([status, spec]) => {
      const headers =
        spec.headers &&
        Object.fromEntries(
          Object.entries(spec.headers).map(([name, h]) => [name, { description: h.description, schema: h.schema }]),
        );
      const schema =
        spec.schemas.length === 1
          ? convert(spec.schemas[0], "output")
          : { oneOf: spec.schemas.map((one) => convert(one, "output")) };
      return [
        status,
        {
          description: spec.description,
          ...(headers ? { headers } : {}),
          ...(spec.schemas.length ? { content: { [spec.contentType ?? "application/json"]: { schema } } } : {}),
        },
      ];
    }),
  );
}

const WEBHOOK_SIGNATURE_HEADERS = [
  {
    name: "X-Webhook-Signature",
    in: "header",
    required: true,
    schema: { type: "string" },
    description: "sha256=<lowercase hex HMAC-SHA256 of the exact body, keyed with the registered secret>",
  },
  {
    name: "webhook-id",
    in: "header",
    required: true,
    schema: { type: "string" },
    description: "The event id (Standard Webhooks): the same at every retry",
  },
  {
    name: "webhook-timestamp",
    in: "header",
    required: true,
    schema: { type: "string" },
    description: "Unix seconds of this attempt (Standard Webhooks)",
  },
  {
    name: "webhook-signature",
    in: "header",
    required: true,
    schema: { type: "string" },
    description: "v1,<base64 HMAC-SHA256 of id.timestamp.body> (Standard Webhooks; key: the secret's UTF-8 bytes)",
  },
];

/** OpenAPI 3.1 `webhooks`: one POST we send per event name. */
function webhookOperations(hooks: NonNullable<OpenApiInfo["webhooks"]>, convert: Convert): Json {
  return Object.fromEntries(
    hooks.map((hook) => [
      hook.name,
      {
        post: {
          operationId: `webhook_${hook.name.replace(/\W/g, "_")}`,
          // Sent by us: the receiver authenticates it by its signature headers, not by any of our schemes.
          security: [],
          summary: hook.summary,
          description:
            "Sent to every registered webhook subscribed to this name whose department the event concerns (administrators' webhooks without a department get all). Any 2xx is success; otherwise retried at +1 min, +5 min, +30 min, +2 h and +24 h, then the webhook is disabled.",
          parameters: WEBHOOK_SIGNATURE_HEADERS,
          requestBody: { required: true, content: { "application/json": { schema: convert(hook.schema, "output") } } },
          responses: { "2XX": { description: "Received" } },
        },
      },
    ]),
  );
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
};

function objectParameters(schema: z.ZodType | undefined, where: "path" | "query", convert: Convert) {
  if (!schema || !(schema instanceof z.ZodObject)) return [];
  return Object.entries(schema.shape as Record<string, z.ZodType>).map(([name, field]) => {
    const json = convert(field, "input");
    return {
      name,
      in: where,
      required: where === "path" || !field.safeParse(undefined).success,
      ...(typeof json.description === "string" ? { description: json.description } : {}),
      schema: json,
    };
  });
}

function requestBody(route: RouteDefinition, convert: Convert) {
  const contentType =
    route.bodyType === "multipart"
      ? "multipart/form-data"
      : route.bodyType === "form"
        ? "application/x-www-form-urlencoded"
        : "application/json";
  return { required: true, content: { [contentType]: { schema: convert(route.body!, "input") } } };
}

function security(access: AccessRule[]): Json[] {
  if (access.some((rule) => rule.kind === "public")) return [];
  const alternatives = access.map((rule) =>
    rule.kind === "applicant"
      ? { BearerAuth: [] }
      : rule.kind === "client"
        ? { BearerAuth: [rule.scope] }
        : rule.kind === "apiKey"
          ? { ApiKeyAuth: [] }
          : { AdminAuth: ["admin"] },
  );
  // One entry per distinct requirement.
  return alternatives.filter((a, i) => alternatives.findIndex((b) => JSON.stringify(b) === JSON.stringify(a)) === i);
}

/** Who may call, in words, appended to each operation's description. */
export function describeAccess(access: AccessRule[]): string {
  if (access.some((rule) => rule.kind === "public")) return "Access: anyone (no authentication).";
  const words = access.map((rule) =>
    rule.kind === "applicant"
      ? "an applicant (identity-locker token)"
      : rule.kind === "client"
        ? `a system client with scope \`${rule.scope}\``
        : rule.kind === "apiKey"
          ? "a department (X-API-Key + X-Department-Code)"
          : "an administrator (token with scope `admin`)",
  );
  return `Access: ${words.join(", or ")}. An admin token carries every scope.`;
}

/** Drops JSON-Schema-only keys OpenAPI tools trip over and points refs at components. */
function clean(json: Json): Json {
  const text = JSON.stringify(json).replaceAll('"#/$defs/', '"#/components/schemas/');
  const copy = JSON.parse(text) as Json;
  delete copy.$schema;
  delete copy.$id;
  delete copy.id;
  return copy;
}
