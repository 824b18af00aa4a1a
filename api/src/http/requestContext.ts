/**
 * First middleware: a request id (the caller's X-Request-Id when sane, else a UUID) echoed in the response, a
 * child logger carrying it, one log line per request, and the latency histogram by route template.
 */
import { randomUUID } from "node:crypto";
import type { Context, Next } from "koa";
import type { Logger } from "pino";
import type { Metrics } from "../observability/metrics.ts";

declare module "koa" {
  interface DefaultState {
    requestId: string;
    log: Logger;
  }
}

export function requestContext(logger: Logger, metrics: Metrics) {
  return async (ctx: Context, next: Next) => {
    const incoming = ctx.get("x-request-id");
    const requestId = /^[\w.-]{1,64}$/.test(incoming) ? incoming : randomUUID();
    ctx.state.requestId = requestId;
    ctx.state.log = logger.child({ requestId });
    ctx.set("X-Request-Id", requestId);
    const started = performance.now();
    try {
      await next();
    } finally {
      const seconds = (performance.now() - started) / 1000;
      const route = (ctx as Context & { _matchedRoute?: string })._matchedRoute ?? "unmatched";
      metrics.httpDuration.observe({ method: ctx.method, route: String(route), status: String(ctx.status) }, seconds);
      ctx.state.log.info({ method: ctx.method, route, status: ctx.status, ms: Math.round(seconds * 1000) }, "request");
    }
  };
}
