/**
 * Conditional GET: an answer whose ETag the client already holds (If-None-Match) is sent as 304 with no body, so a
 * verifier polling a licence, or a page refreshed, transfers nothing when nothing changed.
 */
import { createHash } from "node:crypto";
import type { Middleware } from "koa";
import { canonicalJson } from "../encoding/canonicalJson.ts";

export function conditionalGet(): Middleware {
  return async (ctx, next) => {
    await next();
    const etag = ctx.response.get("ETag");
    const held = ctx.get("If-None-Match");
    if (!etag || !held || ctx.status !== 200 || (ctx.method !== "GET" && ctx.method !== "HEAD")) return;
    // Weak comparison (RFC 9110 §13.1.2), whatever the request's Cache-Control: fetch() adds `no-cache` to every
    // conditional request, for which Koa's `ctx.fresh` answers stale.
    const opaque = (tag: string) => tag.trim().replace(/^W\//, "");
    if (held.trim() === "*" || held.split(",").some((tag) => opaque(tag) === opaque(etag))) {
      ctx.status = 304;
      ctx.body = null;
    }
  };
}

/** Headers for an answer that holds `value`: its weak ETag, and revalidation before any cached copy is reused. */
export function revalidatedBy(value: unknown): Record<string, string> {
  const digest = createHash("sha256").update(canonicalJson(value)).digest("base64url").slice(0, 27);
  return { ETag: `W/"${digest}"`, "Cache-Control": "no-cache" };
}
