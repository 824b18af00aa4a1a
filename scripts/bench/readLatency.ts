/**
 * Read latency with the seeded requests in the index: 32 concurrent clients for a fixed time per endpoint, each
 * picking a random seeded request. GET /requests/{id} and a filtered GET /requests as an administrator (who may
 * read every request), GET /verify/{tokenId} without authentication.
 */
import { percentile, say, type BenchEnvironment } from "./benchEnvironment.ts";
import { startHttpCeiling } from "./httpCeiling.ts";
import type { Seeded } from "./seedRequests.ts";

export interface LatencyResult {
  endpoint: string;
  requests: number;
  p50: number;
  p95: number;
  p99: number;
  /** Undefined for the HTTP ceiling (a reference, not an endpoint of ours). */
  goalP95?: number;
}

async function measure(base: string, endpoint: string, goalP95: number | undefined, seconds: number, concurrency: number, route: () => string, token?: string): Promise<LatencyResult> {
  const latencies: number[] = [];
  const deadline = performance.now() + seconds * 1000;
  // A short warm-up, not counted (connections, plan caches).
  for (let i = 0; i < 50; i++) await fetch(`${base}${route()}`, { headers: token ? { authorization: `Bearer ${token}` } : {} }).then((r) => r.arrayBuffer());
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) {
        const started = performance.now();
        const response = await fetch(`${base}${route()}`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
        await response.arrayBuffer();
        if (response.status !== 200) throw new Error(`${endpoint}: ${response.status}`);
        latencies.push(performance.now() - started);
      }
    }),
  );
  const result = { endpoint, requests: latencies.length, p50: percentile(latencies, 50), p95: percentile(latencies, 95), p99: percentile(latencies, 99), goalP95 };
  say(`${endpoint}: p50 ${result.p50.toFixed(1)} / p95 ${result.p95.toFixed(1)} / p99 ${result.p99.toFixed(1)} ms (${result.requests} requests${goalP95 ? `, goal p95 ≤ ${goalP95} ms` : ""})`);
  return result;
}

export async function measureReadLatency(env: BenchEnvironment, seeded: Seeded, seconds = 10, concurrency = 32): Promise<LatencyResult[]> {
  const pick = () => Math.floor(Math.random() * seeded.count);
  const types = ["RESORT_LICENSE", "TRADE_LICENSE", "BUILDING_PERMIT"];
  const ceiling = await startHttpCeiling();
  try {
    return [
      await measure(env.api, "GET /requests/{id}", 15, seconds, concurrency, () => `/requests/${seeded.requestIds[pick()]}`, env.adminToken),
      await measure(env.api, "GET /requests?requestType&status", 25, seconds, concurrency, () => `/requests?requestType=${types[pick() % 3]}&status=DRAFT&page=${1 + (pick() % 20)}&limit=20`, env.adminToken),
      await measure(env.api, "GET /verify/{tokenId}", 10, seconds, concurrency, () => `/verify/${seeded.firstTokenId + BigInt(pick())}`),
      await measure(ceiling.url, "Reference: bare Koa, constant JSON (the HTTP ceiling here)", undefined, seconds, concurrency, () => "/"),
    ];
  } finally {
    await ceiling.close();
  }
}
