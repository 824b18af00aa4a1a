/**
 * The Koa application: request context → error handler → body parsing → routes. Resource routes live under
 * /api/v1 and come from the route table, which also generates the OpenAPI document.
 */
import { conditionalGet } from "./http/conditionalGet.ts";
import Router from "@koa/router";
import Koa from "koa";
import { koaBody } from "koa-body";
import type { Logger } from "pino";
import type { Authenticator } from "./auth/principal.ts";
import type { IdempotencyStore } from "./http/idempotency.ts";
import { allowedMethods } from "./http/allowedMethods.ts";
import { errorMiddleware } from "./http/errorMiddleware.ts";
import { serviceOpenApiDocument } from "./http/openapi.ts";
import { requestContext } from "./http/requestContext.ts";
import { clientKey, isLimitedPublicRead, RateLimiter, type RateLimits } from "./http/rateLimit.ts";
import { mountRoutes, type RouteDefinition } from "./http/routeTable.ts";
import type { Metrics } from "./observability/metrics.ts";
import { mountSystemRoutes, type SystemDeps } from "./routes/system.ts";

export const API_PREFIX = "/api/v1";

/** Every response without a policy of its own: nothing may frame it (/verify and /docs set theirs where they are served). */
const DEFAULT_CSP = "frame-ancestors 'none'";

/**
 * Baseline security headers on every response: no MIME sniffing, no referrer, no framing; API answers
 * (credentials, personal data) are never stored by caches unless a route says otherwise.
 */
function securityHeaders(): Koa.Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } finally {
      ctx.set("X-Content-Type-Options", "nosniff");
      ctx.set("Referrer-Policy", "no-referrer");
      ctx.set("X-Frame-Options", "DENY");
      if (!ctx.response.get("Content-Security-Policy")) ctx.set("Content-Security-Policy", DEFAULT_CSP);
      if (!ctx.response.get("Cache-Control") && (ctx.path.startsWith(API_PREFIX) || ctx.path.startsWith("/auth/")))
        ctx.set("Cache-Control", "no-store");
    }
  };
}
export const API_VERSION = "1.0.0";

export interface AppDeps extends Omit<SystemDeps, "openApiDocument"> {
  logger: Logger;
  metrics: Metrics;
  publicBaseUrl: string;
  routes: RouteDefinition[];
  /** Resolves the caller of each request (bearer tokens, department keys). */
  authenticate: Authenticator;
  /** docs/decisions.md, served in the OpenAPI document's description. */
  decisions?: string;
  /** Stores Idempotency-Key outcomes; without it the header is ignored. */
  idempotency?: IdempotencyStore;
  /** Routes outside /api/v1 (e.g. /.well-known/jwks.json), mounted at the root. */
  rootRoutes?: RouteDefinition[];
  jsonLimit?: string;
  /** Rate limits of the authentication, write, read and public read endpoints (none: unlimited). */
  rateLimits?: RateLimits;
  /** The buckets of those limits, when shared with the authentication module (failed credentials); else made here. */
  limiter?: RateLimiter;
  /**
   * How many reverse proxies in front of the API append to X-Forwarded-For (0: none, the socket address is the
   * client). With n, the client is the address the n-th proxy from us saw; anything a caller wrote before it is ignored.
   */
  trustProxyHops?: number;
}

export function createApp(deps: AppDeps): Koa {
  const hops = deps.trustProxyHops ?? 0;
  const app = new Koa({ proxy: hops > 0, maxIpsCount: hops });
  app.silent = true; // errors are answered and logged by our middleware, not printed by Koa
  app.use(requestContext(deps.logger, deps.metrics));
  const oauthPaths = new Map([
    ...(deps.rootRoutes ?? [])
      .filter((route) => route.errorBody === "oauth")
      .map((route) => [route.path, route.bodyType] as const),
    ...deps.routes
      .filter((route) => route.errorBody === "oauth")
      .map((route) => [API_PREFIX + route.path, route.bodyType] as const),
  ]);
  app.use(securityHeaders());
  app.use(errorMiddleware({ oauthPaths }));
  app.use(conditionalGet());
  app.use(
    koaBody({
      json: true,
      urlencoded: true,
      multipart: false, // document uploads parse multipart in their own route (streaming, size limits)
      jsonLimit: deps.jsonLimit ?? "1mb",
      includeUnparsed: true, // Idempotency-Key fingerprints cover the exact body
      formLimit: "64kb",
    }),
  );

  let openApi: Record<string, unknown> | undefined;
  const openApiDocument = () =>
    (openApi ??= serviceOpenApiDocument({
      prefix: API_PREFIX,
      version: API_VERSION,
      routes: deps.routes,
      rootRoutes: deps.rootRoutes ?? [],
      publicBaseUrl: deps.publicBaseUrl,
      decisions: deps.decisions,
    }));

  const limiter = deps.limiter ?? (deps.rateLimits ? new RateLimiter(deps.rateLimits) : undefined);
  // Anonymous reads that cost chain calls and queries (verification by sequential token ids, /health): per client.
  app.use(async (ctx, next) => {
    if (limiter && isLimitedPublicRead(ctx.method, ctx.path)) await limiter.take("public", clientKey(ctx.ip));
    await next();
  });
  const root = new Router();
  mountSystemRoutes(root, { ...deps, openApiDocument });
  mountRoutes(root, deps.rootRoutes ?? [], deps.authenticate, undefined, limiter);
  app.use(root.routes());
  app.use(root.allowedMethods()); // for the system routes (not in the route table)

  const api = new Router({ prefix: API_PREFIX });
  mountRoutes(api, deps.routes, deps.authenticate, deps.idempotency, limiter);
  app.use(api.routes());
  // After both routers (and answering before the one above): the table's routes, root and /api/v1 alike.
  app.use(allowedMethods());
  return app;
}
