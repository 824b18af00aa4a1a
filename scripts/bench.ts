/**
 * `npm run bench`: cost per operation and throughput, measured so the figures mean something on any machine
 * (as ratios within one run). Every figure comes with the CPU milliseconds per operation summed over every process of the stack
 * (API processes, workers, Ponder, Postgres by client, the chain; pidusage) and beside a reference measured in the
 * same run (the raw chain with the same contract call; a bare Koa server answering the same clients).
 *
 *   1. gas of the reference lifecycle (npm run bench:gas);
 *   2. automine (the embedded default stack): idle cost, raw chain, POST /requests from 32 clients, write → visible,
 *      then reads with BENCH_SEED requests (default 100,000) seeded, 32 clients;
 *   3. interval blocks of 1 s with free gas on an external chain (anvil --block-time 1, contracts deployed by
 *      scripts/deploy.ts, the stack pointed at it by environment variables): idle cost, raw chain, POST /requests
 *      from enough clients to fill blocks, write → visible, approvals from 1 and 8 departments.
 * Writes docs/benchmarks.md (section "bench") and docs/benchmarks.json (the issue's keys, numbers only).
 *
 * Size: BENCH_SCALE (default 1, the full run of about 12 minutes); BENCH_SCALE=0.05 is a short run of 2–3 minutes
 * whose figures only show that the harness works. BENCH_SEED and BENCH_INTERVAL_CLIENTS override those sizes.
 */
import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { measureApprovalThroughput, setUpParallelReview, type ApprovalResult } from "./bench/approvalThroughput.ts";
import { BLOCK_PERIOD_S, say, startBenchEnvironment, type BenchEnvironment } from "./bench/benchEnvironment.ts";
import { rpc } from "./stack/localChain.ts";
import { writeFigures, type Figures } from "./bench/benchmarkFigures.ts";
import {
  cpuPerOperation,
  cpuTable,
  endedProcesses,
  fixed,
  isApiProcess,
  mark,
  ratio,
  sanityProblems,
  type Phase,
} from "./bench/benchReport.ts";
import { measureCpu } from "./bench/processCpu.ts";
import { measureReadLatency, type LatencyResult } from "./bench/readLatency.ts";
import { seedRequests, type Seeded } from "./bench/seedRequests.ts";
import {
  measureRawThroughput,
  measureVisibility,
  measureWriteThroughput,
  type RawThroughput,
  type VisibilityResult,
  type WriteResult,
} from "./bench/writeThroughput.ts";
import { machineLine, writeBenchmarkSection } from "./lib/benchmarkReport.ts";

const SCALE = Number(process.env.BENCH_SCALE ?? 1);
if (!(SCALE > 0 && SCALE <= 1)) throw new Error(`BENCH_SCALE must be in (0, 1] (got ${process.env.BENCH_SCALE})`);
const size = (full: number, least: number) => Math.max(least, Math.round(full * SCALE));
const SIZES = {
  idleSeconds: size(5, 2),
  automine: {
    raw: size(500, 100),
    clients: 32,
    writes: size(800, 64),
    visibilityClients: 8,
    visibilityWrites: size(200, 24),
  },
  seed: Number(process.env.BENCH_SEED ?? size(100_000, 2_000)),
  reads: { clients: 32, seconds: size(10, 2) },
  interval: {
    raw: size(2_000, 300),
    // 1 s blocks: each write waits a block or more, so filling a block of ~400 mints needs hundreds of clients.
    clients: Number(process.env.BENCH_INTERVAL_CLIENTS ?? (SCALE >= 1 ? 256 : 64)),
    writes: size(2_000, 128),
    visibilityClients: 32,
    visibilityWrites: size(200, 32),
    approvalsPerDepartment: size(30, 8),
  },
};
const cores = os.availableParallelism();
const started = Date.now();
const when = new Date().toISOString().slice(0, 16).replace("T", " ");
const phases: Phase[] = [];

console.log(`Benchmarks on ${machineLine()}, BENCH_SCALE=${SCALE}\n`);

// ---- 1. gas
console.log("1/3 gas (npm run bench:gas)");
const gasDir = await mkdtemp(path.join(os.tmpdir(), "bench-gas-"));
const gasFile = path.join(gasDir, "gas.json");
await new Promise<void>((resolve, reject) => {
  const child = spawn("npm", ["run", "--silent", "bench:gas"], {
    stdio: ["ignore", "ignore", "inherit"],
    env: { ...process.env, BENCH_GAS_JSON: gasFile },
  });
  child.on("close", (code) => (code === 0 ? resolve() : reject(new Error(`bench:gas exited with ${code}`))));
});
const gas = JSON.parse(await readFile(gasFile, "utf8")) as Figures["gas"];
await rm(gasDir, { recursive: true, force: true });
say(`gas: mint ${gas.mint}, new version ${gas.anchorVersion}, approval ${gas.approval}, lifecycle ${gas.lifecycle}`);

/** Idle cost: the stack's CPU over a few seconds with no client (Ponder's polling, the chain's blocks, timers). */
async function idle(env: BenchEnvironment): Promise<Phase> {
  // Let what the set-up started (jobs deriving events from its transactions, the index catching up) finish.
  await new Promise((r) => setTimeout(r, 2_000));
  const { cpu } = await measureCpu(env.meter, () => new Promise((r) => setTimeout(r, SIZES.idleSeconds * 1000)));
  say(`idle (${env.mode}): ${fixed(cpu.stackMs / SIZES.idleSeconds, 0)} CPU-ms per second`);
  return { title: `${env.mode}: idle`, unit: "s", operations: SIZES.idleSeconds, cpu };
}

/** Transactions and gas in the blocks mined during a phase: whether the clients filled the blocks. */
async function blockFill(
  env: BenchEnvironment,
  from: number,
  to: number,
): Promise<{ blocks: number; txPerBlock: number; gasFill: number }> {
  let transactions = 0;
  let gasUsed = 0;
  let gasLimit = 0;
  for (let n = from + 1; n <= to; n++) {
    const block = await rpc(env.stack.rpcUrl, "eth_getBlockByNumber", [`0x${n.toString(16)}`, false]);
    transactions += block.transactions.length;
    gasUsed += parseInt(block.gasUsed, 16);
    gasLimit += parseInt(block.gasLimit, 16);
  }
  const blocks = Math.max(1, to - from);
  return { blocks, txPerBlock: transactions / blocks, gasFill: gasLimit > 0 ? gasUsed / gasLimit : 0 };
}

// ---- 2. automine
console.log("2/3 automine: starting the embedded stack…");
let automine: {
  idle: Phase;
  raw: RawThroughput;
  writes: WriteResult;
  visible: VisibilityResult;
  seeded: Seeded;
  reads: LatencyResult[];
};
{
  const env = await startBenchEnvironment("automine");
  try {
    // Requests need workflows (the eight departments' joint review among them).
    await setUpParallelReview(env);
    const idlePhase = await idle(env);
    const raw = await measureRawThroughput(env, SIZES.automine.raw, { batch: true });
    const writes = await measureWriteThroughput(env, SIZES.automine.clients, SIZES.automine.writes);
    const visible = await measureVisibility(env, SIZES.automine.visibilityClients, SIZES.automine.visibilityWrites);
    console.log(`  reads with ${SIZES.seed.toLocaleString("en")} requests: seeding…`);
    const seeded = await seedRequests(env, SIZES.seed);
    const reads = await measureReadLatency(env, seeded, SIZES.reads.seconds, SIZES.reads.clients);
    automine = { idle: idlePhase, raw, writes, visible, seeded, reads };
  } finally {
    await env.close();
  }
}

// ---- 3. interval blocks
console.log("3/3 interval blocks of 1 s (external anvil, deployed by scripts/deploy.ts): starting…");
let interval: {
  idle: Phase;
  raw: RawThroughput;
  writes: WriteResult;
  fill: Awaited<ReturnType<typeof blockFill>>;
  visible: VisibilityResult;
  approvals: ApprovalResult[];
};
{
  const env = await startBenchEnvironment("interval1s");
  try {
    const keys = await setUpParallelReview(env);
    const idlePhase = await idle(env);
    const raw = await measureRawThroughput(env, SIZES.interval.raw);
    const before = await env.core.provider.getBlockNumber();
    const writes = await measureWriteThroughput(env, SIZES.interval.clients, SIZES.interval.writes);
    const fill = await blockFill(env, before, await env.core.provider.getBlockNumber());
    say(
      `blocks during the writes: ${fill.blocks}, ${fixed(fill.txPerBlock, 0)} transactions and ${fixed(fill.gasFill * 100, 0)}% of the gas limit each`,
    );
    const visible = await measureVisibility(env, SIZES.interval.visibilityClients, SIZES.interval.visibilityWrites);
    const approvals = await measureApprovalThroughput(env, keys, SIZES.interval.approvalsPerDepartment, {
      rounds: [1, 8],
      inFlight: 4,
      creators: 32,
    });
    interval = { idle: idlePhase, raw, writes, fill, visible, approvals };
  } finally {
    await env.close();
  }
}

// ---- figures
const read = (key: LatencyResult["key"]) => automine.reads.find((r) => r.key === key)!;
const [one, eight] = [
  interval.approvals.find((a) => a.departments === 1)!,
  interval.approvals.find((a) => a.departments === 8)!,
];
const idleRate = (phase: Phase) => cpuPerOperation(phase);
const [automineIdle, intervalIdle] = [idleRate(automine.idle), idleRate(interval.idle)];
const readPhase = (r: LatencyResult): Phase => ({
  title: `reads: ${r.endpoint}`,
  unit: "read",
  operations: r.requests,
  cpu: r.cpu,
  idleMsPerSecond: automineIdle,
});
phases.push(
  automine.idle,
  {
    title: "automine: raw mint",
    unit: "tx",
    operations: automine.raw.count,
    cpu: automine.raw.cpu,
    idleMsPerSecond: automineIdle,
  },
  {
    title: "automine: POST /requests",
    unit: "write",
    operations: automine.writes.writes,
    cpu: automine.writes.cpu,
    idleMsPerSecond: automineIdle,
  },
  interval.idle,
  {
    title: "interval1s: raw mint",
    unit: "tx",
    operations: interval.raw.count,
    cpu: interval.raw.cpu,
    idleMsPerSecond: intervalIdle,
  },
  {
    title: "interval1s: POST /requests",
    unit: "write",
    operations: interval.writes.writes,
    cpu: interval.writes.cpu,
    idleMsPerSecond: intervalIdle,
  },
  {
    title: "interval1s: approvals, 8 departments",
    unit: "approval",
    operations: eight.approvals,
    cpu: eight.cpu,
    idleMsPerSecond: intervalIdle,
  },
  readPhase(read("detail")),
  readPhase(read("list")),
  readPhase(read("verify")),
);
const detailPhase = phases.find((p) => p.title === `reads: ${read("detail").endpoint}`)!;
const figures: Figures = {
  writes: {
    automine: {
      rawTxPerSec: automine.raw.sequentialTps,
      e2eReqPerSec: automine.writes.perSecond,
      cpuMsPerWrite: automine.writes.cpu.stackMs / automine.writes.writes,
    },
    interval1s: {
      rawTxPerSec: interval.raw.sequentialTps,
      e2eReqPerSec: interval.writes.perSecond,
      p95Ms: interval.writes.p95,
      cpuMsPerWrite: interval.writes.cpu.stackMs / interval.writes.writes,
    },
  },
  approvals: { interval1s: { oneDepartmentPerSec: one.perSecond, eightDepartmentsPerSec: eight.perSecond } },
  reads: {
    bareHttpP95Ms: read("bareHttp").p95,
    detailP95Ms: read("detail").p95,
    listP95Ms: read("list").p95,
    verifyP95Ms: read("verify").p95,
    apiCpuMsPerDetailRead: cpuPerOperation(detailPhase, isApiProcess),
  },
  gas,
};
await writeFigures(figures);

// ---- report
const problems = phases.flatMap((p) => sanityProblems(p, cores));
const otherLoad = Math.max(
  ...phases.map((p) => p.cpu.machineBusyCores - p.cpu.lines.reduce((s, l) => s + l.ms, 0) / p.cpu.wallMs),
);
const minutes = (Date.now() - started) / 60_000;
const bare = read("bareHttp").p95;
const blockMs = BLOCK_PERIOD_S * 1000;
const w = figures.writes;
const failedRow = (writes: WriteResult, visible: VisibilityResult): string[][] =>
  writes.failed + visible.failed === 0
    ? []
    : [["writes that failed (not 201)", String(writes.failed + visible.failed), writes.firstFailure ?? "", ""]];
const rows: string[][] = [
  ["**Writes, automine** (embedded stack)", "", "", ""],
  [
    "raw chain: pre-signed `LicenceToken.mint`, one at a time",
    `${fixed(w.automine.rawTxPerSec, 0)} tx/s`,
    `(reference; ${fixed(automine.raw.batchTps ?? NaN, 0)} tx/s as one JSON-RPC batch)`,
    "",
  ],
  [
    `POST /requests end to end, ${automine.writes.concurrency} clients, ${automine.writes.writes} writes`,
    `${fixed(w.automine.e2eReqPerSec)} req/s`,
    `${fixed(ratio(w.automine.e2eReqPerSec, w.automine.rawTxPerSec) * 100, 0)}% of raw`,
    "",
  ],
  [
    "CPU-ms per write, whole stack",
    fixed(w.automine.cpuMsPerWrite),
    "",
    `≤ 12 ${mark(w.automine.cpuMsPerWrite <= 12)}`,
  ],
  [
    "POST /requests latency p50 / p95",
    `${fixed(automine.writes.p50, 0)} / ${fixed(automine.writes.p95, 0)} ms`,
    "",
    "",
  ],
  [
    `write → visible through the API p50 / p95 (${automine.visible.concurrency} clients)`,
    `${fixed(automine.visible.p50, 0)} / ${fixed(automine.visible.p95, 0)} ms`,
    "",
    `p95 ≤ 300 ms ${mark(automine.visible.p95 <= 300)}`,
  ],
  ...failedRow(automine.writes, automine.visible),
  [
    "read-your-writes timeouts (writes + visibility); not visible right after the 201",
    `${automine.writes.readYourWritesTimeouts + automine.visible.readYourWritesTimeouts}; ${automine.visible.notVisibleAtReturn}`,
    "",
    `0 ${mark(automine.writes.readYourWritesTimeouts + automine.visible.readYourWritesTimeouts === 0)}`,
  ],
  ["**Writes, interval blocks of 1 s, free gas** (external anvil)", "", "", ""],
  [
    "raw chain: pre-signed `LicenceToken.mint`, one at a time",
    `${fixed(w.interval1s.rawTxPerSec, 0)} tx/s`,
    "(reference)",
    "",
  ],
  [
    `POST /requests end to end, ${interval.writes.concurrency} clients, ${interval.writes.writes} writes`,
    `${fixed(w.interval1s.e2eReqPerSec)} req/s`,
    `${fixed(ratio(w.interval1s.e2eReqPerSec, w.interval1s.rawTxPerSec) * 100, 0)}% of raw`,
    `≥ 50% ${mark(w.interval1s.e2eReqPerSec >= 0.5 * w.interval1s.rawTxPerSec)}`,
  ],
  [
    "blocks during those writes",
    `${interval.fill.blocks} blocks, ${fixed(interval.fill.txPerBlock, 0)} tx each`,
    `${fixed(interval.fill.gasFill * 100, 0)}% of the block gas limit`,
    "",
  ],
  [
    "CPU-ms per write, whole stack",
    fixed(w.interval1s.cpuMsPerWrite),
    "",
    `≤ 12 ${mark(w.interval1s.cpuMsPerWrite <= 12)}`,
  ],
  [
    "POST /requests latency p50 / p95",
    `${fixed(interval.writes.p50, 0)} / ${fixed(w.interval1s.p95Ms, 0)} ms`,
    "",
    `p95 ≤ ${blockMs + 500} ms ${mark(w.interval1s.p95Ms <= blockMs + 500)}`,
  ],
  [
    `write → visible through the API p50 / p95 (${interval.visible.concurrency} clients)`,
    `${fixed(interval.visible.p50, 0)} / ${fixed(interval.visible.p95, 0)} ms`,
    "",
    `p95 ≤ ${blockMs + 300} ms ${mark(interval.visible.p95 <= blockMs + 300)}`,
  ],
  ...failedRow(interval.writes, interval.visible),
  [
    "read-your-writes timeouts (writes + visibility); not visible right after the 201",
    `${interval.writes.readYourWritesTimeouts + interval.visible.readYourWritesTimeouts}; ${interval.visible.notVisibleAtReturn}`,
    "",
    `0 ${mark(interval.writes.readYourWritesTimeouts + interval.visible.readYourWritesTimeouts === 0)}`,
  ],
  ["**Approvals, interval blocks of 1 s** (each department its own wallet, 4 in flight each)", "", "", ""],
  ...interval.approvals.map((a) => [
    `${a.departments} department(s), ${a.approvals} approvals`,
    `${fixed(a.perSecond)} /s`,
    `${fixed(cpuPerOperation({ title: "", unit: "", operations: a.approvals, cpu: a.cpu }))} CPU-ms each`,
    a.departments === 8
      ? `≥ 4× one: ${fixed(ratio(eight.perSecond, one.perSecond), 1)}× ${mark(eight.perSecond >= 4 * one.perSecond)}`
      : "",
  ]),
  [
    `**Reads** (automine stack, ${automine.seeded.count.toLocaleString("en")} requests seeded, ${SIZES.reads.clients} clients, ${SIZES.reads.seconds} s each)`,
    "",
    "",
    "",
  ],
  ...automine.reads.map((r) => [
    `${r.endpoint}: p50 / p95 / p99 (${r.requests} requests)`,
    `${fixed(r.p50)} / ${fixed(r.p95)} / ${fixed(r.p99)} ms`,
    r.goalRatio === undefined
      ? `(reference; ${fixed(r.cpu.stackMs / Math.max(1, r.requests), 3)} CPU-ms each)`
      : `${fixed(ratio(r.p95, bare), 1)}× bare; ${fixed(r.cpu.stackMs / Math.max(1, r.requests), 2)} CPU-ms each (stack)`,
    r.goalRatio === undefined ? "" : `p95 ≤ ${r.goalRatio}× bare ${mark(r.p95 <= r.goalRatio * bare)}`,
  ]),
  [
    "API processes' CPU-ms per detail read",
    fixed(figures.reads.apiCpuMsPerDetailRead, 2),
    "",
    `≤ 0.4 ${mark(figures.reads.apiCpuMsPerDetailRead <= 0.4)}`,
  ],
  [
    "**Gas** (London, as deployed)",
    `mint ${gas.mint}, new version ${gas.anchorVersion}, approval ${gas.approval}, lifecycle ${gas.lifecycle}`,
    "see the gas section",
    "",
  ],
];
const shortRun = SCALE < 1 || otherLoad > 0.25;
await writeBenchmarkSection(
  "bench",
  [
    "## Cost per operation and throughput (`npm run bench`)",
    "",
    `Command: \`${SCALE === 1 ? "" : `BENCH_SCALE=${SCALE} `}npm run bench\` (${fixed(minutes, 1)} min). Machine: ${machineLine()}. Date: ${when} UTC.`,
    ...(shortRun
      ? [
          "",
          `**Short run on a shared machine: these figures only show that the harness works; do not judge the code by them.** ` +
            `(BENCH_SCALE=${SCALE}; other processes on the machine kept up to ${fixed(Math.max(0, otherLoad), 2)} of its ${cores} cores busy during a phase.)`,
        ]
      : []),
    "",
    "Every CPU figure is the CPU time (user + system, sampled with pidusage every 200 ms) of every process of the stack,",
    "each charged to the named process above it, over the phase, divided by the operations of the phase: API processes,",
    "job workers, Ponder, the chain, and Postgres, whose backends are charged to their client (`Postgres for api` is the",
    "work the API asked of Postgres). Ratios are to references measured in the same run. Figures in docs/benchmarks.json. Inside",
    "the Node processes, function by function: `npx node scripts/bench/profileWrites.ts` (V8 profiles of a write burst).",
    "",
    "| Figure | Value | Reference / ratio | Goal |",
    "|---|---|---|---|",
    ...rows.map((r) => `| ${r.join(" | ")} |`),
    "",
    "### Where the CPU goes, per operation and process",
    "",
    ...cpuTable(phases),
    "",
    ...endedProcesses(phases),
    "",
    problems.length === 0
      ? "Sanity: in every phase the stack used CPU, and the stack with the load generator used no more cores than the machine had busy."
      : `Sanity problems:\n${problems.map((p) => `- ${p}`).join("\n")}`,
  ].join("\n"),
);
console.log(`\nWritten: docs/benchmarks.md (section bench) and docs/benchmarks.json (${fixed(minutes, 1)} min)`);
if (problems.length > 0) console.log(`Sanity problems:\n  ${problems.join("\n  ")}`);
console.log(JSON.stringify(figures, null, 2));
