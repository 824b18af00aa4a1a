/**
 * Read latency with the seeded requests in the index: 32 autocannon clients for a fixed time per endpoint, each
 * request for a random seeded request. GET /requests/{id} and a filtered GET /requests as an administrator (who may
 * read every request), GET /verify/{tokenId} without authentication; then the same clients against a bare Koa
 * server answering a constant JSON body of a request read's size in its own process: the HTTP round trip itself at
 * that concurrency (the reference). The CPU the stack used is measured per endpoint.
 */
import { fork } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { load, percentile, say, type BenchEnvironment } from "./benchEnvironment.ts";
import { measureCpu, type CpuUsage, type StackCpuMeter } from "./processCpu.ts";
import type { Seeded } from "./seedRequests.ts";

if (process.argv[2] === "serve-bare-koa") {
  const { default: Koa } = await import("koa");
  const body = {
    requestId: "00000000-0000-4000-8000-000000000000",
    events: Array.from({ length: 8 }, (_, i) => ({ i, description: "x".repeat(120) })),
  };
  const server = new Koa().use((ctx) => void (ctx.body = body)).listen(0, "127.0.0.1");
  server.on("listening", () => process.send!(server.address()));
  process.on("disconnect", () => process.exit(0));
}

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

interface Endpoint {
  key: ReadEndpoint;
  endpoint: string;
  goalRatio?: number;
  base: string;
  route: () => string;
  token?: string;
}

async function measure(meter: StackCpuMeter, e: Endpoint, seconds: number, connections: number) {
  const options = {
    url: e.base,
    headers: e.token ? { authorization: `Bearer ${e.token}` } : {},
    requests: [
      { setupRequest: (req: any) => ({ ...req, path: `${new URL(e.base).pathname.replace(/\/$/, "")}${e.route()}` }) },
    ],
  };
  await load(200, { ...options, connections: 1, amount: 50 }); // warm-up, not counted (connections, plan caches)
  const { result, cpu } = await measureCpu(meter, () => load(200, { ...options, connections, duration: seconds }));
  const { latencies, failures } = result;
  if (failures.length > 0) throw new Error(`${e.endpoint}: answered ${failures[0]}`);
  const [p50, p95, p99] = [50, 95, 99].map((p) => percentile(latencies, p));
  const requests = latencies.length;
  say(
    `${e.endpoint}: p50 ${p50.toFixed(1)} / p95 ${p95.toFixed(1)} / p99 ${p99.toFixed(1)} ms (${requests} requests, ${(cpu.stackMs / Math.max(1, requests)).toFixed(2)} CPU-ms each)`,
  );
  return { key: e.key, endpoint: e.endpoint, requests, p50, p95, p99, goalRatio: e.goalRatio, cpu };
}

export async function measureReadLatency(
  env: BenchEnvironment,
  seeded: Seeded,
  seconds = 10,
  concurrency = 32,
): Promise<LatencyResult[]> {
  const pick = () => Math.floor(Math.random() * seeded.count);
  const types = ["RESORT_LICENSE", "TRADE_LICENSE", "BUILDING_PERMIT"];
  const bare = fork(fileURLToPath(import.meta.url), ["serve-bare-koa"], { stdio: "ignore" });
  try {
    const [{ port }] = (await once(bare, "message")) as [{ port: number }];
    const endpoints: Endpoint[] = [
      {
        key: "detail",
        endpoint: "GET /requests/{id}",
        goalRatio: 2,
        base: env.api,
        route: () => `/requests/${seeded.requestIds[pick()]}`,
        token: env.adminToken,
      },
      {
        key: "list",
        endpoint: "GET /requests?requestType&status",
        goalRatio: 3,
        base: env.api,
        route: () => `/requests?requestType=${types[pick() % 3]}&status=DRAFT&page=${1 + (pick() % 20)}&limit=20`,
        token: env.adminToken,
      },
      {
        key: "verify",
        endpoint: "GET /verify/{tokenId}",
        goalRatio: 2,
        base: env.api,
        route: () => `/verify/${seeded.firstTokenId + BigInt(pick())}`,
      },
    ];
    const results = [];
    for (const e of endpoints) results.push(await measure(env.meter, e, seconds, concurrency));
    const bareMeter = { named: () => [{ name: "bare Koa server", pid: bare.pid! }] };
    const reference = "Reference: bare Koa, constant JSON (the HTTP round trip here)";
    results.push(
      await measure(
        bareMeter,
        { key: "bareHttp", endpoint: reference, base: `http://127.0.0.1:${port}`, route: () => "/" },
        seconds,
        concurrency,
      ),
    );
    return results;
  } finally {
    bare.kill();
  }
}
