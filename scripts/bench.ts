/**
 * `npm run bench`: the whole performance report on a fresh embedded stack, written to docs/benchmarks.md with the
 * command, the machine and the date, and summarised in a table at the end.
 *   1. write throughput: raw chain (pre-signed mints straight to the node) vs end to end over HTTP, 1/8/32 clients;
 *   2. approvals from 1, 2, 4 and 8 departments in parallel;
 *   3. read latency with BENCH_SEED (default 100,000) requests in the index, 32 concurrent clients;
 *   4. gas (npm run bench:gas) and indexer lag (npm run bench:lag), unless BENCH_SKIP_GAS_LAG=true.
 */
import { spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import { measureApprovalThroughput, setUpParallelReview, type ApprovalResult } from "./bench/approvalThroughput.ts";
import { say, startBenchEnvironment } from "./bench/benchEnvironment.ts";
import { measureReadLatency, type LatencyResult } from "./bench/readLatency.ts";
import { seedRequests, type Seeded } from "./bench/seedRequests.ts";
import { measureRawThroughput, measureWriteThroughput, type RawThroughput, type WriteResult } from "./bench/writeThroughput.ts";
import { BENCHMARKS_FILE, machineLine, writeBenchmarkSection } from "./lib/benchmarkReport.ts";

const SEED = Number(process.env.BENCH_SEED ?? 100_000);
const started = Date.now();
const when = new Date().toISOString().slice(0, 16).replace("T", " ");

console.log(`Benchmarks on ${machineLine()}\n`);
console.log("1/4 starting a fresh stack…");
const env = await startBenchEnvironment();
let raw: RawThroughput, writes: WriteResult[], approvals: ApprovalResult[], seeded: Seeded, reads: LatencyResult[];
try {
  const keys = await setUpParallelReview(env);
  console.log("2/4 write throughput");
  raw = await measureRawThroughput(env, 500);
  writes = [];
  for (const [concurrency, count] of [[1, 100], [8, 400], [32, 800]] as const) writes.push(await measureWriteThroughput(env, concurrency, count));
  approvals = await measureApprovalThroughput(env, keys, 30);
  console.log(`3/4 read latency with ${SEED.toLocaleString("en")} requests`);
  seeded = await seedRequests(env, SEED);
  reads = await measureReadLatency(env, seeded);
} finally {
  await env.close();
}

const best = Math.max(...writes.map((w) => w.perSecond));
const ratio = best / raw.sequentialTps;
const grows = approvals.every((a, i) => i === 0 || a.perSecond > approvals[i - 1].perSecond);
const mark = (ok: boolean) => (ok ? "✅" : "❌");
await writeBenchmarkSection(
  "throughput",
  [
    "## Write throughput (`npm run bench`)",
    "",
    `${machineLine()}; ${when} UTC. Own embedded stack (anvil automine, Postgres, Ponder, one API process).`,
    "",
    "| Path | Throughput | Latency p50 / p95 (ms) |",
    "|---|---:|---|",
    `| Raw chain: 500 pre-signed \`LicenceToken.mint\` sent straight to the node, one at a time | ${raw.sequentialTps.toFixed(0)} tx/s | |`,
    `| Raw chain: the same as one JSON-RPC batch | ${raw.batchTps.toFixed(0)} tx/s | |`,
    ...writes.map((w) => `| POST /requests end to end (outbox → receipt → index → 201), ${w.concurrency} client(s), ${w.writes} writes | ${w.perSecond.toFixed(1)} req/s | ${w.p50.toFixed(0)} / ${w.p95.toFixed(0)} |`),
    "",
    `Best end-to-end rate against raw one-at-a-time: **${(ratio * 100).toFixed(0)}%** (goal ≥ 50%: ${mark(ratio >= 0.5)}).`,
    "",
    "| Departments approving in parallel (each from its own wallet, 4 in flight each) | Approvals | Approvals/s |",
    "|---|---:|---:|",
    ...approvals.map((a) => `| ${a.departments} | ${a.approvals} | ${a.perSecond.toFixed(1)} |`),
    "",
    `Throughput grows with the number of department wallets: ${mark(grows)}.`,
  ].join("\n"),
);
await writeBenchmarkSection(
  "reads",
  [
    "## Read latency with 100k requests (`npm run bench`)",
    "",
    `${machineLine()}; ${when} UTC. ${seeded.count.toLocaleString("en")} requests seeded (chain ${seeded.seconds.chain.toFixed(0)} s, API rows ${seeded.seconds.rows.toFixed(0)} s, index caught up ${seeded.seconds.index.toFixed(0)} s later):`,
    "mints from the operator sent with anvil's account impersonation in JSON-RPC batches of 1,000 with automine off and mined",
    "in full blocks, indexed by the real Ponder indexer; the API's outbox and request rows inserted in bulk (1,000 applicants,",
    "three request types, created a second apart). 32 concurrent clients for 10 s per endpoint, random requests, after a",
    "warm-up; the clients run in the bench process on the same two cores. The reference row is a bare Koa server in its own",
    "process answering a constant JSON body, measured by the same clients: the HTTP round trip alone at that concurrency here.",
    "",
    "| Endpoint | Requests | p50 (ms) | p95 (ms) | p99 (ms) | Goal p95 |",
    "|---|---:|---:|---:|---:|---|",
    ...reads.map((r) => `| ${r.endpoint} | ${r.requests} | ${r.p50.toFixed(1)} | ${r.p95.toFixed(1)} | ${r.p99.toFixed(1)} | ${r.goalP95 === undefined ? "(reference)" : `≤ ${r.goalP95} ${mark(r.p95 <= r.goalP95)}`} |`),
  ].join("\n"),
);

if (process.env.BENCH_SKIP_GAS_LAG !== "true") {
  console.log("4/4 gas and indexer lag");
  for (const script of ["bench:gas", "bench:lag"]) {
    await new Promise<void>((resolve, reject) => {
      const child = spawn("npm", ["run", "--silent", script], { stdio: "inherit" });
      child.on("close", (code) => (code === 0 ? resolve() : reject(new Error(`${script} exited with ${code}`))));
    });
  }
}

// The summary, including the gas and lag figures as the report now has them.
const report = await readFile(BENCHMARKS_FILE, "utf8");
const cell = (pattern: RegExp) => pattern.exec(report)?.slice(1).join(" ") ?? "—";
const rows = [
  ["Write throughput, raw chain (one at a time)", `${raw.sequentialTps.toFixed(0)} tx/s`, ""],
  ...writes.map((w) => [`POST /requests end to end, ${w.concurrency} client(s)`, `${w.perSecond.toFixed(1)} req/s`, w.concurrency === 32 ? `best ${(ratio * 100).toFixed(0)}% of raw (≥ 50%) ${mark(ratio >= 0.5)}` : ""]),
  ...approvals.map((a) => [`Approvals, ${a.departments} department(s)`, `${a.perSecond.toFixed(1)} /s`, a.departments === 8 ? `grows with wallets ${mark(grows)}` : ""]),
  ...reads.map((r) => [`${r.endpoint} p50/p95/p99`, `${r.p50.toFixed(1)} / ${r.p95.toFixed(1)} / ${r.p99.toFixed(1)} ms`, r.goalP95 === undefined ? "reference" : `p95 ≤ ${r.goalP95} ms ${mark(r.p95 <= r.goalP95)}`]),
  ["Gas: mint to a new applicant", cell(/mint to a new applicant \| (\d+) \|/), "≤ 75000"],
  ["Gas: non-final approval", cell(/A approves \(non-final\) \| (\d+) \|/), "≤ 55000"],
  ["Gas: new document version", cell(/new document version \(draft\) \| (\d+) \|/), "≤ 50000"],
  ["Gas: reference lifecycle", cell(/Reference lifecycle total\*\* \| \*\*(\d+)\*\*/), "≤ 450000"],
  ["Indexer lag through the API, one at a time (p50 / p95)", cell(/\| 200, one at a time \| (\d+ \/ \d+) \|\n\| 200, 8 at a time \| \d+ \/ \d+ \|\n\n/), "p95 ≤ 300 ms"],
];
console.log(`\nSummary (${((Date.now() - started) / 60_000).toFixed(1)} min; details in ${BENCHMARKS_FILE})\n`);
console.log("| Measure | Result | Goal |\n|---|---|---|");
for (const [measure, result, goal] of rows) console.log(`| ${measure} | ${result} | ${goal} |`);
