/**
 * Rate limits: a token bucket per caller, refilled continuously, so a caller may burst up to the per-minute limit and
 * then goes at the limit's pace. Over the limit: 429 RATE_LIMITED with Retry-After (whole seconds until one more
 * request is allowed).
 *
 * - auth: every request to the sign-in endpoints (/auth/*), per client address, at SIGN_IN_VOLUME_FACTOR times the
 *   auth limit: it bounds the work one address can cause there (secret hashing, sign-ins in progress), while
 *   failures, counted below at the auth limit itself, are what stops guessing;
 * - failure: failed credentials (a wrong client secret, API key or bearer token), counted per credential and
 *   address, and per address (FailedCredentials). A credential spent from an address is refused before it is
 *   checked; another credential from the same address is not (failures never lock out the address's other users);
 * - write: POST, PUT, PATCH and DELETE elsewhere, per authenticated caller (or per address without one);
 * - read: GETs by an authenticated caller, per caller;
 * - public: the anonymous reads that cost chain calls and queries (/verify*, the verification page, /health,
 *   /metrics), per client address (IPv6 per /64, which one subscriber usually holds whole).
 *
 * The client address is Koa's ctx.ip: the socket's, or with TRUST_PROXY_HOPS the one that many trusted proxies saw.
 *
 * Buckets live in the process: with several API processes the limit applies per process (docs/decisions.md).
 */
import { createHash } from "node:crypto";
import ipaddr from "ipaddr.js";
import { AppError } from "../errors.ts";

export type RateClass = "auth" | "failure" | "write" | "read" | "public";

export interface RateLimits {
  /** Requests per minute; 0 turns the limit off. The failure buckets share the auth limit. */
  authPerMinute: number;
  writePerMinute: number;
  readPerMinute?: number;
  publicPerMinute?: number;
}

const MESSAGES: Record<RateClass, string> = {
  auth: "authentication attempts",
  failure: "failed authentications",
  write: "write requests",
  read: "read requests",
  public: "requests",
};

interface Bucket {
  tokens: number;
  updatedAt: number;
}

const MAX_BUCKETS = 50_000;
/**
 * Requests to the sign-in endpoints one address may send per minute, as a multiple of the failures it may have:
 * users sharing an address (a NAT, an office proxy) are limited by their failures, not by each other's volume.
 */
export const SIGN_IN_VOLUME_FACTOR = 5;

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
    this.#spend(kind, caller, 1);
  }

  /** Throws 429 with Retry-After when the caller's bucket is spent, taking nothing. */
  check(kind: RateClass, caller: string): void {
    this.#spend(kind, caller, 0);
  }

  #spend(kind: RateClass, caller: string, cost: 0 | 1): void {
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
    if (cost === 0) return;
    bucket.tokens -= cost;
    this.#buckets.set(key, bucket);
    if (this.#buckets.size > MAX_BUCKETS) this.#prune(now);
  }

  #perMinute(kind: RateClass): number {
    switch (kind) {
      case "auth":
        return this.#limits.authPerMinute * SIGN_IN_VOLUME_FACTOR;
      case "failure":
        return this.#limits.authPerMinute;
      case "write":
        return this.#limits.writePerMinute;
      case "read":
        return this.#limits.readPerMinute ?? 0;
      default:
        return this.#limits.publicPerMinute ?? 0;
    }
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

/** The bucket key of an authenticated caller (reads and writes are counted per caller, wherever it calls from). */
export function principalKey(principal: { kind: string; id: string }): string {
  return `${principal.kind}:${principal.id}`;
}

/**
 * Failed credentials, counted per credential and client address, and per address. `credential` names what was
 * tried without its secret: `client:<client_id>`, `apikey:<department code>`, `bearer:<hash of the token>`.
 * Without a limiter (limits off) nothing is counted and every failure may be recorded.
 */
export class FailedCredentials {
  readonly #limiter?: RateLimiter;

  constructor(limiter?: RateLimiter) {
    this.#limiter = limiter;
  }

  /** Before the credential is checked: 429 when it has failed too often from this address (guessing its secret). */
  admit(credential: string, ip: string): void {
    this.#limiter?.check("failure", `credential:${bucketId(credential)}@${clientKey(ip)}`);
  }

  /**
   * After the credential failed: counts it against the credential from this address and against the address. 429
   * when either allowance is spent; returning means the failure may be answered as such and recorded (so the audit
   * rows of failures are bounded per address too).
   */
  failed(credential: string, ip: string): void {
    const address = clientKey(ip);
    let refused: unknown;
    // Both are counted even when one is spent: a credential keeps being counted from an address past its failures.
    for (const key of [`credential:${bucketId(credential)}@${address}`, `address:${address}`]) {
      try {
        this.#limiter?.take("failure", key);
      } catch (error) {
        refused ??= error;
      }
    }
    if (refused) throw refused;
  }
}

/** A credential as a bucket key: a long one (the caller's text, up to a header's size) by its hash. */
function bucketId(credential: string): string {
  return credential.length <= 128 ? credential : `sha256:${createHash("sha256").update(credential).digest("hex")}`;
}
