/**
 * What the rate limiter costs per request: CPU time of this process (and, for the shared buckets, of the Postgres
 * backend serving it) per `take`, with the buckets in memory and in Postgres. Runs against a database whose API
 * schema is migrated (a running `npm start`: DATABASE_URL as printed, or the API role's URL):
 *
 *   DATABASE_URL=postgres://... node scripts/bench/limiterCost.ts [requests] [concurrency]
 *
 * Requests alternate over 1,000 callers; the limits are high enough that none is refused (a refusal costs a second,
 * read-only statement). Measured: one take (a public read, a sign-in) and an authenticated request (its credential
 * admitted, a read of its failure bucket, then the caller's read or write taken).
 */
import pidusage from "pidusage";
import { FailedCredentials, MemoryBuckets, PostgresBuckets, RateLimiter } from "../../api/src/http/rateLimit.ts";
import { createPool } from "../../api/src/db/pool.ts";

const requests = Number(process.argv[2] ?? 20_000);
const concurrency = Number(process.argv[3] ?? 8);
const limits = { authPerMinute: 1_000_000, writePerMinute: 1_000_000, readPerMinute: 1_000_000 };
const failures = (limiter: RateLimiter) => new FailedCredentials(limiter);

/**
 * `request`: what the limiter does for one request. A take alone (a public read, a sign-in), or an authenticated
 * read or write: its credential admitted (a read of its failure bucket), then the caller's take.
 */
type Shape = (limiter: RateLimiter, i: number) => Promise<void>;
const takeOnly: Shape = (limiter, i) => limiter.take(i % 2 ? "read" : "write", `client:bench-${i % 1000}`);
const authenticated: Shape = async (limiter, i) => {
  await failures(limiter).admit(`bearer:bench-${i % 1000}`, "127.0.0.1");
  await limiter.take(i % 2 ? "read" : "write", `client:bench-${i % 1000}`);
};

async function measure(limiter: RateLimiter, shape: Shape, backends: number[] = []) {
  // CPU ms of the Postgres backends serving the limiter (pidusage: user + system).
  const backendMs = async () =>
    backends.length === 0 ? 0 : Object.values(await pidusage(backends)).reduce((sum, s) => sum + s.ctime, 0);
  let next = 0;
  const run = async () => {
    while (next < requests) {
      const i = next++;
      await shape(limiter, i);
    }
  };
  // Warm-up (prepared statements, JIT), then the measured run.
  for (let i = 0; i < 500; i++) await limiter.take("read", `client:warm-${i % 50}`);
  const backendBefore = await backendMs();
  const cpu = process.cpuUsage();
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, run));
  const elapsed = performance.now() - started;
  const used = process.cpuUsage(cpu);
  return {
    nodeCpuMsPerRequest: (used.user + used.system) / 1000 / requests,
    postgresCpuMsPerRequest: ((await backendMs()) - backendBefore) / requests,
    wallMsPerRequest: elapsed / requests,
    requestsPerSecond: Math.round((requests / elapsed) * 1000),
  };
}

const memoryLimiter = new RateLimiter(limits, new MemoryBuckets());
const memory = [await measure(memoryLimiter, takeOnly), await measure(memoryLimiter, authenticated)];
const url = process.env.DATABASE_URL;
if (!url) throw new Error("DATABASE_URL is required (the API's database, migrated)");
const pool = createPool(url, process.env.API_DB_SCHEMA ?? "app", concurrency);
// Every connection opened up front, so the backends serving the limiter are known.
const clients = await Promise.all(Array.from({ length: concurrency }, () => pool.connect()));
const backends = await Promise.all(
  clients.map(async (client) => Number((await client.query("SELECT pg_backend_pid() AS pid")).rows[0].pid)),
);
for (const client of clients) client.release();
const sharedLimiter = new RateLimiter(limits, new PostgresBuckets(pool));
const shared = [
  await measure(sharedLimiter, takeOnly, backends),
  await measure(sharedLimiter, authenticated, backends),
];
await pool.query(`DELETE FROM rate_limit_buckets WHERE key LIKE '%bench-%' OR key LIKE '%:client:warm-%'`);
await pool.end();

const row = (name: string, m: (typeof memory)[number]) =>
  `| ${name} | ${m.nodeCpuMsPerRequest.toFixed(4)} | ${m.postgresCpuMsPerRequest.toFixed(4)} | ${m.wallMsPerRequest.toFixed(4)} | ${m.requestsPerSecond} |`;
console.log(`${requests} requests, ${concurrency} at a time, 1,000 callers`);
console.log("| buckets | API CPU ms / request | Postgres CPU ms / request | wall ms / request | requests / s |");
console.log("|---|---|---|---|---|");
console.log(row("in memory (per process): one take", memory[0]));
console.log(row("in memory (per process): authenticated request (admit + take)", memory[1]));
console.log(row("Postgres (shared): one take", shared[0]));
console.log(row("Postgres (shared): authenticated request (admit + take)", shared[1]));
