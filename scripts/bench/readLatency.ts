/**
 * Read latency with the seeded requests in the index: 32 concurrent clients for a fixed time per endpoint, each
 * picking a random seeded request. GET /requests/{id} and a filtered GET /requests as an administrator (who may
 * read every request), GET /verify/{tokenId} without authentication; then the same clients against a bare Koa
 * server (the reference). The CPU the stack used is measured per endpoint.
 */
import { percentile, say, type BenchEnvironment } from "./benchEnvironment.ts";
import { startHttpCeiling } from "./httpCeiling.ts";
import { measureCpu, StackCpuMeter, type CpuUsage } from "./processCpu.ts";
import type { Seeded } from "./seedRequests.ts";

export type ReadEndpoint = "detail" | "list" | "verify" | "bareHttp";

export interface LatencyResult {
  key: ReadEndpoint;
  endpoint: string;
  requests: number;
  p50: number;
  p95: number;
  p99: number;
  /** Goal: p95 at most this many times the bare server's (undefined for the reference itself). */
  goalRatio?: number;
  cpu: CpuUsage;
}

async function measure(
  meter: StackCpuMeter,
  base: string,
  key: ReadEndpoint,
  endpoint: string,
  goalRatio: number | undefined,
  seconds: number,
  concurrency: number,
  route: () => string,
  token?: string,
): Promise<LatencyResult> {
  const latencies: number[] = [];
  // A short warm-up, not counted (connections, plan caches).
  for (let i = 0; i < 50; i++)
    await fetch(`${base}${route()}`, { headers: token ? { authorization: `Bearer ${token}` } : {} }).then((r) =>
      r.arrayBuffer(),
    );
  const deadline = performance.now() + seconds * 1000;
  const { cpu } = await measureCpu(meter, () =>
    Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (performance.now() < deadline) {
          const started = performance.now();
          const response = await fetch(`${base}${route()}`, {
            headers: token ? { authorization: `Bearer ${token}` } : {},
          });
          await response.arrayBuffer();
          if (response.status !== 200) throw new Error(`${endpoint}: ${response.status}`);
          latencies.push(performance.now() - started);
        }
      }),
    ),
  );
  const result = {
    key,
    endpoint,
    requests: latencies.length,
    p50: percentile(latencies, 50),
    p95: percentile(latencies, 95),
    p99: percentile(latencies, 99),
    goalRatio,
    cpu,
  };
  say(
    `${endpoint}: p50 ${result.p50.toFixed(1)} / p95 ${result.p95.toFixed(1)} / p99 ${result.p99.toFixed(1)} ms (${result.requests} requests, ${(cpu.stackMs / Math.max(1, result.requests)).toFixed(2)} CPU-ms each)`,
  );
  return result;
}

export async function measureReadLatency(
  env: BenchEnvironment,
  seeded: Seeded,
  seconds = 10,
  concurrency = 32,
): Promise<LatencyResult[]> {
  const pick = () => Math.floor(Math.random() * seeded.count);
  const types = ["RESORT_LICENSE", "TRADE_LICENSE", "BUILDING_PERMIT"];
  const ceiling = await startHttpCeiling();
  try {
    const bare = new StackCpuMeter(() => [{ name: "bare Koa server", pid: ceiling.pid }], undefined);
    return [
      await measure(
        env.meter,
        env.api,
        "detail",
        "GET /requests/{id}",
        2,
        seconds,
        concurrency,
        () => `/requests/${seeded.requestIds[pick()]}`,
        env.adminToken,
      ),
      await measure(
        env.meter,
        env.api,
        "list",
        "GET /requests?requestType&status",
        3,
        seconds,
        concurrency,
        () => `/requests?requestType=${types[pick() % 3]}&status=DRAFT&page=${1 + (pick() % 20)}&limit=20`,
        env.adminToken,
      ),
      await measure(
        env.meter,
        env.api,
        "verify",
        "GET /verify/{tokenId}",
        2,
        seconds,
        concurrency,
        () => `/verify/${seeded.firstTokenId + BigInt(pick())}`,
      ),
      await measure(
        bare,
        ceiling.url,
        "bareHttp",
        "Reference: bare Koa, constant JSON (the HTTP round trip here)",
        undefined,
        seconds,
        concurrency,
        () => "/",
      ),
    ];
  } finally {
    await ceiling.close();
  }
}
