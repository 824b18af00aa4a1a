/**
 * Every status an operation can answer, from its route declaration: the statuses the middleware and mountRoutes
 * produce for any route with that declaration (authentication, validation, body parsing, Idempotency-Key, rate
 * limits, an unreachable database or chain), merged with the handler's own (`route.responses`). The OpenAPI
 * document is generated from this, so what it states and what the API answers come from one place.
 */
import type { z } from "zod/v4";
import type { oas31 } from "zod-openapi";
import { OAuthErrorSchema } from "../auth/oauthErrors.ts";
import { rateClassOf } from "./rateLimit.ts";
import { ErrorSchema, honoursIdempotencyKey, type ResponseSpec, type RouteDefinition } from "./routeTable.ts";

type HeaderSpec = oas31.HeaderObject;

interface StatusSpec {
  description: string;
  /** The body's schemas: one, or several when different parts of the chain answer the status in different shapes. */
  schemas: z.ZodType[];
  contentType?: string;
  headers?: Record<string, HeaderSpec>;
}

const RETRY_AFTER: Record<string, HeaderSpec> = {
  "Retry-After": { description: "Seconds to wait before trying again", schema: { type: "integer" as const } },
};
const WWW_AUTHENTICATE: Record<string, HeaderSpec> = {
  "WWW-Authenticate": {
    description: 'The challenge: `Bearer error="invalid_token", error_description="…"` or `ApiKey`',
    schema: { type: "string" as const },
  },
};

/** Methods whose JSON and form bodies the body parser reads before routing (koa-body's parsedMethods). */
export const BODY_METHODS = new Set(["post", "put", "patch"]);

/** What the middleware and mountRoutes can answer for this route, by status (the handler's statuses excluded). */
export function middlewareStatuses(route: RouteDefinition): Record<number, StatusSpec> {
  const oauth = route.errorBody === "oauth";
  const clientError = oauth ? OAuthErrorSchema : ErrorSchema;
  const isPublic = route.access.some((rule) => rule.kind === "public");
  const statuses: Record<number, StatusSpec> = {};
  const add = (
    status: number,
    reason: string,
    schema: z.ZodType = ErrorSchema,
    headers?: Record<string, HeaderSpec>,
  ) => {
    const spec = (statuses[status] ??= { description: "", schemas: [] });
    spec.description = spec.description ? `${spec.description}; ${reason}` : reason;
    if (!spec.schemas.includes(schema)) spec.schemas.push(schema);
    if (headers) spec.headers = { ...spec.headers, ...headers };
  };

  const parts = [
    route.params && "path",
    route.query && "query",
    route.body && route.bodyType !== "multipart" && "body",
  ].filter(Boolean);
  if (parts.length)
    add(
      400,
      `${oauth ? "invalid_request" : "VALIDATION_ERROR"}: an invalid ${parts.join(", ")} value (details.issues names each)`,
      clientError,
    );
  if (BODY_METHODS.has(route.method)) {
    add(
      400,
      `${oauth ? "invalid_request" : "MALFORMED_JSON"}: the body is not valid JSON; ${oauth ? "invalid_request" : "VALIDATION_ERROR"}: valid JSON but not an object; ${oauth ? "invalid_request" : "FORBIDDEN_PROPERTY"}: the JSON body has a "__proto__" key; ${oauth ? "invalid_request" : "BAD_REQUEST"}: the body does not decode with its Content-Encoding`,
      clientError,
    );
    add(413, "PAYLOAD_TOO_LARGE: the body is larger than allowed");
    add(415, "UNSUPPORTED_MEDIA_TYPE: the body's Content-Encoding is not supported");
  }
  if (honoursIdempotencyKey(route)) {
    add(400, "VALIDATION_ERROR: Idempotency-Key is not 1-255 visible ASCII characters");
    add(409, "IDEMPOTENCY_IN_PROGRESS: a request with this Idempotency-Key is still being processed");
    add(422, "IDEMPOTENCY_KEY_REUSED: this Idempotency-Key was used with a different request");
  }
  // Credentials are checked on every route, public ones included: sent and invalid is a 401 anywhere (a route that
  // reads its own Authorization header documents its 401).
  if (route.ownAuthorization) add(401, "its own bearer token is missing or not valid", clientError, WWW_AUTHENTICATE);
  else
    add(
      401,
      isPublic
        ? "UNAUTHORIZED: credentials were sent and are not valid (send none to call anonymously)"
        : "UNAUTHORIZED: authentication is missing or invalid",
      ErrorSchema,
      WWW_AUTHENTICATE,
    );
  // Node's parser refuses it before any route: answered in the error shape by httpServer.ts.
  add(431, "HEADERS_TOO_LARGE: the request line and headers are larger than 16 KiB");
  if (!isPublic) add(403, "FORBIDDEN: the caller is authenticated but not one this operation accepts (see Access)");
  const rateClass = rateClassOf(route);
  add(
    429,
    rateClass === "auth"
      ? "RATE_LIMITED: too many sign-in requests from this address, or the credential tried (or this address) failed too often"
      : rateClass === "write"
        ? "RATE_LIMITED: too many write requests from this caller, or the credential sent (or this address) failed too often"
        : "RATE_LIMITED: too many reads by this caller, or the credential sent (or this address) failed too often",
    ErrorSchema,
    RETRY_AFTER,
  );
  add(
    503,
    "SERVICE_UNAVAILABLE: the database is not reachable right now; CHAIN_UNAVAILABLE: the blockchain node is not reachable (nothing was recorded)",
    ErrorSchema,
    RETRY_AFTER,
  );
  if (route.sendsTransactions) {
    add(502, "CHAIN_REJECTED_TRANSACTION: the node refused the transaction; nothing was recorded");
    add(
      504,
      "CHAIN_TIMEOUT: the transaction was recorded and sent but not mined in time; it will be confirmed later (details.transactionHash)",
    );
  }
  return statuses;
}

/** Every status of the operation: the handler's declared responses, then what the middleware adds. */
export function documentedStatuses(route: RouteDefinition): Record<number, StatusSpec> {
  const all: Record<number, StatusSpec> = {};
  for (const [status, spec] of Object.entries(route.responses) as [string, ResponseSpec][]) {
    all[Number(status)] = {
      description: spec.description,
      schemas: spec.schema ? [spec.schema] : [],
      contentType: spec.contentType,
    };
  }
  for (const [key, spec] of Object.entries(middlewareStatuses(route))) {
    const status = Number(key);
    const declared = all[status];
    if (!declared) {
      all[status] = spec;
      continue;
    }
    // Already declared by the route: keep its words, add the middleware's reasons and any other body shape.
    if (!declared.description.includes(spec.description))
      declared.description = `${declared.description}. Also ${spec.description}`;
    for (const schema of spec.schemas) if (!declared.schemas.includes(schema)) declared.schemas.push(schema);
    if (spec.headers) declared.headers = { ...declared.headers, ...spec.headers };
  }
  return Object.fromEntries(Object.entries(all).sort(([a], [b]) => Number(a) - Number(b)));
}
