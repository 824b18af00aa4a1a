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
import { BLOCK_PERIOD_S, say, startBenchEnvironment, type BenchEnvironment } from "./bench/benchEnvironment.ts";
import { writeFigures, type Figures } from "./bench/benchmarkFigures.ts";
import {
  cpuPerOperation,
  cpuTable,
  endedProcesses,
  fixed,
  isApiProcess,
  machineLine,
  mark,
  ratio,
  sanityProblems,
  table,
  writeBenchmarkSection,
} from "./bench/benchReport.ts";
import * as measure from "./bench/phases.ts";
import type { Phase, VisibilityResult, WriteResult } from "./bench/phases.ts";
import { seedRequests } from "./bench/seedRequests.ts";

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

console.log(`Benchmarks on ${machineLine()}, BENCH_SCALE=${SCALE}\n`);

console.log("1/3 gas (npm run bench:gas)");
const gasDir = await mkdtemp(path.join(os.tmpdir(), "bench-gas-"));
await new Promise<void>((resolve, reject) =>
  spawn("npm", ["run", "--silent", "bench:gas"], {
    stdio: ["ignore", "ignore", "inherit"],
    env: { ...process.env, BENCH_GAS_JSON: path.join(gasDir, "gas.json") },
  }).on("close", (code) => (code === 0 ? resolve() : reject(new Error(`bench:gas exited with ${code}`)))),
);
const gas = JSON.parse(await readFile(path.join(gasDir, "gas.json"), "utf8")) as Figures["gas"];
await rm(gasDir, { recursive: true, force: true });
say(`gas: mint ${gas.mint}, new version ${gas.anchorVersion}, approval ${gas.approval}, lifecycle ${gas.lifecycle}`);

/** A bench stack in `mode`, with the eight departments' workflows set up, through `run`; stopped afterwards. */
async function withStack<T>(
  mode: BenchEnvironment["mode"],
  run: (env: BenchEnvironment, keys: measure.DepartmentKey[]) => Promise<T>,
) {
  const env = await startBenchEnvironment(mode);
  try {
    return await run(env, await measure.setUpParallelReview(env));
  } finally {
    await env.close();
  }
}

console.log("2/3 automine: starting the embedded stack…");
const automine = await withStack("automine", async (env) => {
  const s = SIZES.automine;
  const idle = await measure.idle(env, SIZES.idleSeconds);
  const raw = await measure.rawMints(env, s.raw, { batch: true });
  const writes = await measure.writes(env, s.clients, s.writes);
  const visible = await measure.visibility(env, s.visibilityClients, s.visibilityWrites);
  console.log(`  reads with ${SIZES.seed.toLocaleString("en")} requests: seeding…`);
  const seeded = await seedRequests(env, SIZES.seed);
  const reads = await measure.reads(env, seeded, SIZES.reads.seconds, SIZES.reads.clients);
  return { idle, raw, writes, visible, seeded, reads };
});

console.log("3/3 interval blocks of 1 s (external anvil, deployed by scripts/deploy.ts): starting…");
const interval = await withStack("interval1s", async (env, keys) => {
  const s = SIZES.interval;
  const idle = await measure.idle(env, SIZES.idleSeconds);
  const raw = await measure.rawMints(env, s.raw);
  const before = await env.core.provider.getBlockNumber();
  const writes = await measure.writes(env, s.clients, s.writes);
  const fill = await measure.blockFill(env, before, await env.core.provider.getBlockNumber());
  say(
    `blocks during the writes: ${fill.blocks}, ${fixed(fill.txPerBlock, 0)} transactions and ${fixed(fill.gasFill * 100, 0)}% of the gas limit each`,
  );
  const visible = await measure.visibility(env, s.visibilityClients, s.visibilityWrites);
  const [one, eight] = await measure.approvals(env, keys, s.approvalsPerDepartment, [1, 8]);
  return { idle, raw, writes, fill, visible, one, eight };
});

// ---- figures
const { detail, list, verify, bareHttp } = automine.reads;
const withIdle = (idle: Phase, list: Phase[]) => list.map((p) => ({ ...p, idleMsPerSecond: cpuPerOperation(idle) }));
const phases: Phase[] = [
  automine.idle,
  ...withIdle(automine.idle, [automine.raw, automine.writes]),
  interval.idle,
  ...withIdle(interval.idle, [interval.raw, interval.writes, interval.eight]),
  ...withIdle(automine.idle, [detail, list, verify]),
];
const [one, eight] = [interval.one, interval.eight];
const figures: Figures = {
  writes: {
    automine: {
      rawTxPerSec: automine.raw.sequentialTps,
      e2eReqPerSec: automine.writes.perSecond,
      cpuMsPerWrite: cpuPerOperation(automine.writes),
    },
    interval1s: {
      rawTxPerSec: interval.raw.sequentialTps,
      e2eReqPerSec: interval.writes.perSecond,
      p95Ms: interval.writes.p95,
      cpuMsPerWrite: cpuPerOperation(interval.writes),
    },
  },
  approvals: {
    interval1s: {
      oneDepartmentPerSec: one.perSecond,
      eightDepartmentsPerSec: eight.perSecond,
      cpuMsPerApproval: cpuPerOperation(eight),
    },
  },
  reads: {
    bareHttpP95Ms: bareHttp.p95,
    detailP95Ms: detail.p95,
    listP95Ms: list.p95,
    verifyP95Ms: verify.p95,
    apiCpuMsPerDetailRead: cpuPerOperation(detail, isApiProcess),
    stackCpuMsPerDetailRead: cpuPerOperation(detail),
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
const blockMs = BLOCK_PERIOD_S * 1000;
const heading = (title: string) => [title, "", "", ""];
const raw = "raw chain: pre-signed `LicenceToken.mint`, one at a time";
const { fill } = interval;
const blockRow = [
  `${fill.blocks} blocks, ${fixed(fill.txPerBlock, 0)} tx each`,
  `${fixed(fill.gasFill * 100, 0)}% of the block gas limit`,
  "",
];

/** The rows every chain mode has for its writes (`goals`: the interval mode's throughput and latency goals). */
function writeRows(
  writes: WriteResult,
  visible: VisibilityResult,
  rawTps: number,
  goals: boolean,
  visibleGoal: number,
) {
  const timeouts = writes.readYourWritesTimeouts + visible.readYourWritesTimeouts;
  const failed = writes.failed + visible.failed;
  const perWrite = cpuPerOperation(writes);
  const cpuGoal = goals ? 10 : 12;
  return [
    [
      `POST /requests end to end, ${writes.concurrency} clients, ${writes.operations} writes`,
      `${fixed(writes.perSecond)} req/s`,
      `${fixed(ratio(writes.perSecond, rawTps) * 100, 0)}% of raw`,
      goals ? `≥ 50% ${mark(writes.perSecond >= 0.5 * rawTps)}` : "",
    ],
    ...(goals ? [["blocks during those writes", ...blockRow]] : []),
    ["CPU-ms per write, whole stack", fixed(perWrite), "", `≤ ${cpuGoal} ${mark(perWrite <= cpuGoal)}`],
    [
      "POST /requests latency p50 / p95",
      `${fixed(writes.p50, 0)} / ${fixed(writes.p95, 0)} ms`,
      "",
      goals ? `p95 ≤ ${blockMs + 500} ms ${mark(writes.p95 <= blockMs + 500)}` : "",
    ],
    [
      `write → visible through the API p50 / p95 (${visible.concurrency} clients)`,
      `${fixed(visible.p50, 0)} / ${fixed(visible.p95, 0)} ms`,
      "",
      `p95 ≤ ${visibleGoal} ms ${mark(visible.p95 <= visibleGoal)}`,
    ],
    ...(failed === 0 ? [] : [["writes that failed (not 201)", String(failed), writes.firstFailure ?? "", ""]]),
    [
      "read-your-writes timeouts (writes + visibility); not visible right after the 201",
      `${timeouts}; ${visible.notVisibleAtReturn}`,
      "",
      `0 ${mark(timeouts === 0)}`,
    ],
  ];
}
const rows: string[][] = [
  heading("**Writes, automine** (embedded stack)"),
  [
    raw,
    `${fixed(automine.raw.sequentialTps, 0)} tx/s`,
    `(reference; ${fixed(automine.raw.batchTps ?? NaN, 0)} tx/s as one JSON-RPC batch)`,
    "",
  ],
  ...writeRows(automine.writes, automine.visible, automine.raw.sequentialTps, false, 300),
  heading("**Writes, interval blocks of 1 s, free gas** (external anvil)"),
  [raw, `${fixed(interval.raw.sequentialTps, 0)} tx/s`, "(reference)", ""],
  ...writeRows(interval.writes, interval.visible, interval.raw.sequentialTps, true, blockMs + 300),
  heading(
    `**Approvals, interval blocks of 1 s** (each department its own wallet, ${measure.APPROVALS_IN_FLIGHT} in flight each)`,
  ),
  ...[one, eight].map((a) => [
    `${a.departments} department(s), ${a.operations} approvals`,
    `${fixed(a.perSecond)} /s`,
    `${fixed(cpuPerOperation(a))} CPU-ms each`,
    a === eight
      ? `≥ 4× one: ${fixed(ratio(eight.perSecond, one.perSecond), 1)}× ${mark(eight.perSecond >= 4 * one.perSecond)}; ≤ 20 CPU-ms ${mark(cpuPerOperation(eight) <= 20)}`
      : `≥ 20 /s ${mark(one.perSecond >= 20)}`,
  ]),
  heading(
    `**Reads** (automine stack, ${automine.seeded.count.toLocaleString("en")} requests seeded, ${SIZES.reads.clients} clients, ${SIZES.reads.seconds} s each)`,
  ),
  ...[detail, list, verify, bareHttp].map((r) => [
    `${r.endpoint}: p50 / p95 / p99 (${r.operations} requests)`,
    `${fixed(r.p50)} / ${fixed(r.p95)} / ${fixed(r.p99)} ms`,
    r.goalRatio === undefined
      ? `(reference; ${fixed(cpuPerOperation(r), 3)} CPU-ms each)`
      : `${fixed(ratio(r.p95, bareHttp.p95), 1)}× bare; ${fixed(cpuPerOperation(r), 2)} CPU-ms each (stack)`,
    r.goalRatio === undefined ? "" : `p95 ≤ ${r.goalRatio}× bare ${mark(r.p95 <= r.goalRatio * bareHttp.p95)}`,
  ]),
  [
    "Whole stack's CPU-ms per detail read",
    fixed(figures.reads.stackCpuMsPerDetailRead, 2),
    "",
    `≤ 1.0 ${mark(figures.reads.stackCpuMsPerDetailRead <= 1)}`,
  ],
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
    ...table(["Figure", "Value", "Reference / ratio", "Goal"], rows),
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
