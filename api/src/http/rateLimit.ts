/**
 * Rate limits on the authentication and write endpoints: a token bucket per caller, refilled continuously, so a
 * caller may burst up to the per-minute limit and then goes at the limit's pace. Over the limit: 429 RATE_LIMITED
 * with Retry-After (whole seconds until one more request is allowed).
 *
 * - auth: every /auth/* route, and every failed authentication anywhere, per client IP (password guessing, key
 *   guessing);
 * - write: POST, PUT, PATCH and DELETE elsewhere, per authenticated caller (or per IP without one);
 * - public: the anonymous reads that cost chain calls and queries (/verify*, the verification page, /health,
 *   /metrics), per client address (IPv6 per /64, which one subscriber usually holds whole).
 *
 * The client address is Koa's ctx.ip: the socket's, or with TRUST_PROXY_HOPS the one that many trusted proxies saw.
 *
 * Buckets live in the process: with several API processes the limit applies per process (docs/decisions.md).
 */
import ipaddr from "ipaddr.js";
import { AppError } from "../errors.ts";

export type RateClass = "auth" | "write" | "public";

export interface RateLimits {
  /** Requests per minute; 0 turns the limit off. */
  authPerMinute: number;
  writePerMinute: number;
  publicPerMinute?: number;
}

const MESSAGES: Record<RateClass, string> = {
  auth: "authentication attempts",
  write: "write requests",
  public: "requests",
};

interface Bucket {
  tokens: number;
  updatedAt: number;
}

const MAX_BUCKETS = 50_000;

export class RateLimiter {
  readonly #limits: RateLimits;
  readonly #now: () => number;
  readonly #buckets = new Map<string, Bucket>();

  constructor(limits: RateLimits, now: () => number = Date.now) {
    this.#limits = limits;
    this.#now = now;
  }

  /** Takes one request from the caller's bucket, or throws 429 with Retry-After. */
  take(kind: RateClass, caller: string): void {
    const perMinute = this.#perMinute(kind);
    if (perMinute <= 0) return;
    const now = this.#now();
    const perMs = perMinute / 60_000;
    const key = `${kind}:${caller}`;
    const bucket = this.#buckets.get(key) ?? { tokens: perMinute, updatedAt: now };
    bucket.tokens = Math.min(perMinute, bucket.tokens + (now - bucket.updatedAt) * perMs);
    bucket.updatedAt = now;
    if (bucket.tokens < 1) {
      this.#buckets.set(key, bucket);
      const retryAfter = Math.max(1, Math.ceil((1 - bucket.tokens) / perMs / 1000));
      throw new AppError(
        429,
        "RATE_LIMITED",
        `Too many ${MESSAGES[kind]}: try again in ${retryAfter} s`,
        { retryAfterSeconds: retryAfter, limitPerMinute: perMinute },
        { "Retry-After": String(retryAfter) },
      );
    }
    bucket.tokens -= 1;
    this.#buckets.set(key, bucket);
    if (this.#buckets.size > MAX_BUCKETS) this.#prune(now);
  }

  #perMinute(kind: RateClass): number {
    return kind === "auth"
      ? this.#limits.authPerMinute
      : kind === "write"
        ? this.#limits.writePerMinute
        : (this.#limits.publicPerMinute ?? 0);
  }

  /** Drops buckets that have refilled completely: they hold no information. */
  #prune(now: number): void {
    for (const [key, bucket] of this.#buckets) {
      const perMinute = this.#perMinute(key.slice(0, key.indexOf(":")) as RateClass);
      if (bucket.tokens + (now - bucket.updatedAt) * (perMinute / 60_000) >= perMinute) this.#buckets.delete(key);
    }
  }
}

/** Which limit a route falls under (routes are relative to their router: /auth/... is the same under /api/v1). */
export function rateClassOf(route: { method: string; path: string }): RateClass | undefined {
  if (route.path.startsWith("/auth/")) return "auth";
  return route.method === "get" ? undefined : "write";
}

/** GET requests of the public routes that are limited per client address (paths as seen at the application root). */
export function isLimitedPublicRead(method: string, path: string): boolean {
  return (
    (method === "GET" || method === "HEAD") &&
    (/^\/(api\/v1\/)?verify(\/|$)/.test(path) || path === "/health" || path === "/metrics")
  );
}

/** The bucket key of a client address: IPv4 (and IPv4-mapped) as is, IPv6 by its /64. */
export function clientKey(ip: string): string {
  if (!ipaddr.isValid(ip)) return ip;
  const address = ipaddr.process(ip);
  if (address.kind() === "ipv4") return address.toString();
  const parts = (address as ipaddr.IPv6).parts.slice(0, 4);
  return `${parts.map((p) => p.toString(16)).join(":")}::/64`;
}
