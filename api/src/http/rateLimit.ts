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
 *   /metrics, and POST /verify/credential), per client address (IPv6 per /64, which one subscriber usually holds whole).
 *
 * The client address is Koa's ctx.ip: the socket's, or with TRUST_PROXY_HOPS the one that many trusted proxies saw.
 *
 * The buckets are shared by every API process of a deployment: they live in Postgres (PostgresBuckets, one row per
 * bucket, one statement per request), so the limit is the same whether a caller's requests reach one process or
 * many. When Postgres cannot be asked, each process counts on in its own buckets until it can again (see
 * PostgresBuckets): the limit then holds per process, never lifted and never refusing everyone.
 */
import { createHash } from "node:crypto";
import ipaddr from "ipaddr.js";
import type pg from "pg";
import type { Logger } from "pino";
import { AppError } from "../domain/errors.ts";

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

/**
 * Where the buckets are kept. A bucket holds at most `capacity` tokens and refills at `capacity` a minute; a new one
 * is full. `spend` takes `cost` tokens (0: only looks) when at least one is there and says how many were there
 * before (after refilling): fewer than 1 means refused, and nothing was taken.
 */
export interface BucketStore {
  spend(key: string, capacity: number, cost: 0 | 1): Promise<{ allowed: boolean; level: number }>;
}

const MAX_BUCKETS = 50_000;
/**
 * Requests to the sign-in endpoints one address may send per minute, as a multiple of the failures it may have:
 * users sharing an address (a NAT, an office proxy) are limited by their failures, not by each other's volume.
 */
export const SIGN_IN_VOLUME_FACTOR = 5;

/** Buckets in this process's memory: tests, and PostgresBuckets' stand-in while Postgres cannot be asked. */
export class MemoryBuckets implements BucketStore {
  readonly #now: () => number;
  readonly #buckets = new Map<string, { tokens: number; updatedAt: number; capacity: number }>();

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  async spend(key: string, capacity: number, cost: 0 | 1): Promise<{ allowed: boolean; level: number }> {
    return this.spendNow(key, capacity, cost);
  }

  spendNow(key: string, capacity: number, cost: 0 | 1): { allowed: boolean; level: number } {
    const now = this.#now();
    const bucket = this.#buckets.get(key) ?? { tokens: capacity, updatedAt: now, capacity };
    const level = Math.min(capacity, bucket.tokens + ((now - bucket.updatedAt) * capacity) / 60_000);
    if (level < 1 || cost === 0) return { allowed: level >= 1, level };
    this.#buckets.set(key, { tokens: level - cost, updatedAt: now, capacity });
    if (this.#buckets.size > MAX_BUCKETS) this.#prune(now);
    return { allowed: true, level };
  }

  /** Drops buckets that have refilled completely: they hold no information. */
  #prune(now: number): void {
    for (const [key, bucket] of this.#buckets)
      if (bucket.tokens + ((now - bucket.updatedAt) * bucket.capacity) / 60_000 >= bucket.capacity)
        this.#buckets.delete(key);
  }
}

/**
 * Buckets in Postgres (`rate_limit_buckets`), shared by every process on the database. A request costs one statement:
 * an upsert that refills and takes in one go, under the row's lock, so concurrent requests from several processes
 * are counted exactly (a refusal costs a second, read-only one for its Retry-After). Time is the database's clock,
 * the same for every host. The table is UNLOGGED (no WAL: buckets are worth nothing after a crash, and a failover
 * starts them full). A bucket untouched for a minute is full again, so rows older than that are deleted (at most
 * once a minute per process).
 *
 * When Postgres fails a statement (down, restarting, out of connections), the process counts in its own memory
 * buckets until a statement succeeds again, and says so in its log once each way. Deliberately neither open nor
 * closed: failing open would lift every limit, the sign-in failures included, whenever the database is unwell;
 * failing closed would refuse every request, the health check and public verification included (which need no
 * database), because of the limiter alone. Per-process counting keeps each limit within one process's allowance.
 */
export class PostgresBuckets implements BucketStore {
  readonly #pool: Pick<pg.Pool, "query">;
  readonly #fallback = new MemoryBuckets();
  readonly #logger?: Logger;
  #unavailable = false;
  #prunedAt = 0;

  constructor(pool: Pick<pg.Pool, "query">, logger?: Logger) {
    this.#pool = pool;
    this.#logger = logger;
  }

  async spend(key: string, capacity: number, cost: 0 | 1): Promise<{ allowed: boolean; level: number }> {
    let answer: { allowed: boolean; level: number };
    try {
      answer = cost === 1 ? await this.#take(key, capacity) : await this.#look(key, capacity);
    } catch (error) {
      if (!this.#unavailable)
        this.#logger?.warn(
          { err: error },
          "rate limits: Postgres cannot be asked; counting in this process's own buckets until it can",
        );
      this.#unavailable = true;
      return this.#fallback.spendNow(key, capacity, cost);
    }
    if (this.#unavailable) this.#logger?.info("rate limits: counting in Postgres again (shared by every process)");
    this.#unavailable = false;
    if (Date.now() - this.#prunedAt > 60_000) this.#prune();
    return answer;
  }

  async #take(key: string, capacity: number): Promise<{ allowed: boolean; level: number }> {
    // Taken only where at least one token is there after refilling; no row back means refused.
    const { rows } = await this.#pool.query(
      `INSERT INTO rate_limit_buckets AS b (key, tokens, updated_ms)
       VALUES ($1, $2::float8 - 1, extract(epoch FROM clock_timestamp())::float8 * 1000)
       ON CONFLICT (key) DO UPDATE
         SET tokens = least($2::float8, b.tokens + (excluded.updated_ms - b.updated_ms) * $2::float8 / 60000) - 1,
             updated_ms = excluded.updated_ms
         WHERE least($2::float8, b.tokens + (excluded.updated_ms - b.updated_ms) * $2::float8 / 60000) >= 1
       RETURNING b.tokens + 1 AS level`,
      [key, capacity],
    );
    if (rows.length > 0) return { allowed: true, level: Number(rows[0].level) };
    return this.#look(key, capacity);
  }

  async #look(key: string, capacity: number): Promise<{ allowed: boolean; level: number }> {
    const { rows } = await this.#pool.query(
      `SELECT least($2::float8, tokens + (extract(epoch FROM clock_timestamp())::float8 * 1000 - updated_ms) * $2::float8 / 60000) AS level
       FROM rate_limit_buckets WHERE key = $1`,
      [key, capacity],
    );
    const level = rows.length > 0 ? Number(rows[0].level) : capacity;
    return { allowed: level >= 1, level };
  }

  #prune(): void {
    this.#prunedAt = Date.now();
    this.#pool
      .query(
        `DELETE FROM rate_limit_buckets WHERE updated_ms < extract(epoch FROM clock_timestamp())::float8 * 1000 - 60000`,
        [],
      )
      .catch((error: Error) => this.#logger?.warn({ err: error }, "rate limits: old buckets could not be deleted"));
  }
}

export class RateLimiter {
  readonly #limits: RateLimits;
  readonly #store: BucketStore;

  /** `store`: where the buckets are kept; by default this process's memory (one process, or tests). */
  constructor(limits: RateLimits, store: BucketStore = new MemoryBuckets()) {
    this.#limits = limits;
    this.#store = store;
  }

  /** Takes one request from the caller's bucket, or throws 429 with Retry-After. */
  async take(kind: RateClass, caller: string): Promise<void> {
    await this.#spend(kind, caller, 1);
  }

  /** Throws 429 with Retry-After when the caller's bucket is spent, taking nothing. */
  async check(kind: RateClass, caller: string): Promise<void> {
    await this.#spend(kind, caller, 0);
  }

  async #spend(kind: RateClass, caller: string, cost: 0 | 1): Promise<void> {
    const perMinute = this.#perMinute(kind);
    if (perMinute <= 0) return;
    const { allowed, level } = await this.#store.spend(`${kind}:${caller}`, perMinute, cost);
    if (allowed) return;
    const retryAfter = Math.max(1, Math.ceil(((1 - level) * 60) / perMinute));
    throw new AppError(
      429,
      "RATE_LIMITED",
      `Too many ${MESSAGES[kind]}: try again in ${retryAfter} s`,
      { retryAfterSeconds: retryAfter, limitPerMinute: perMinute },
      { "Retry-After": String(retryAfter) },
    );
  }

  #perMinute(kind: RateClass): number {
    const limits = this.#limits;
    if (kind === "auth") return limits.authPerMinute * SIGN_IN_VOLUME_FACTOR;
    if (kind === "failure") return limits.authPerMinute;
    if (kind === "write") return limits.writePerMinute;
    return (kind === "read" ? limits.readPerMinute : limits.publicPerMinute) ?? 0;
  }
}

/** Which limit a route falls under (routes are relative to their router: /auth/... is the same under /api/v1). */
export function rateClassOf(route: { method: string; path: string }): RateClass | undefined {
  if (route.path.startsWith("/auth/")) return "auth";
  return route.method === "get" || route.path === CREDENTIAL_VERIFICATION ? undefined : "write";
}

/** A read whose input (a credential) is too long for a URL, so it is POSTed: limited as the public reads. */
const CREDENTIAL_VERIFICATION = "/verify/credential";

/** The public reads limited per client address (paths as seen at the application root). */
export function isLimitedPublicRead(method: string, path: string): boolean {
  if (method === "POST") return path === `/api/v1${CREDENTIAL_VERIFICATION}`;
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
  async admit(credential: string, ip: string): Promise<void> {
    await this.#limiter?.check("failure", `credential:${bucketId(credential)}@${clientKey(ip)}`);
  }

  /**
   * After the credential failed: counts it against the credential from this address and against the address. 429
   * when either allowance is spent; returning means the failure may be answered as such and recorded (so the audit
   * rows of failures are bounded per address too).
   */
  async failed(credential: string, ip: string): Promise<void> {
    if (!this.#limiter) return;
    const address = clientKey(ip);
    // Both are counted even when one is spent: a credential keeps being counted from an address past its failures.
    const outcomes = await Promise.allSettled(
      [`credential:${bucketId(credential)}@${address}`, `address:${address}`].map((key) =>
        this.#limiter!.take("failure", key),
      ),
    );
    const refused = outcomes.find((outcome) => outcome.status === "rejected");
    if (refused) throw refused.reason;
  }
}

/** A credential as a bucket key: a long one (the caller's text, up to a header's size) by its hash. */
function bucketId(credential: string): string {
  return credential.length <= 128 ? credential : `sha256:${createHash("sha256").update(credential).digest("hex")}`;
}
