/**
 * `npx node scripts/bench/profileWrites.ts` (the project's Node 24): where the CPU of a write goes inside the Node processes of the stack (the
 * API processes and Ponder), to choose what to cut. Starts the bench stack (PROFILE_MODE: automine, the default, or
 * interval1s) with V8's sampling profiler on
 * in every Node child (NODE_OPTIONS=--cpu-prof), warms up, sends PROFILE_WRITES (default 300) POST /requests from
 * 32 clients, stops the stack (each process writes its profile as it exits) and prints, per process, the CPU
 * sampled during the writes only (samples are timestamped on the same monotonic clock as this process) by package
 * or API folder and by function, per write. Read the shares, not the milliseconds: a sample's weight is the wall
 * time since the previous one, so on a busy machine time spent waiting for a core is charged to what was running
 * (`npm run bench`'s /proc figures are the CPU actually used).
 */
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { runConcurrently, say, startBenchEnvironment, type ChainMode } from "./benchEnvironment.ts";
import { setUpParallelReview } from "./phases.ts";

const WRITES = Number(process.env.PROFILE_WRITES ?? 300);
const MODE = (process.env.PROFILE_MODE ?? "automine") as ChainMode;
if (MODE !== "automine" && MODE !== "interval1s") throw new Error("PROFILE_MODE is automine or interval1s");
// With 1 s blocks a write waits a block: more clients keep the stack as busy.
const CLIENTS = MODE === "automine" ? 32 : 128;

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** The package (node_modules/NAME or @scope/name), the API's folder, or V8's own entries. */
function bucketOf(url: string, functionName: string): string {
  if (!url) return `(${functionName.replace(/[()]/g, "") || "native"})`;
  const modules = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (modules) return modules[1];
  const ours = /\/(api\/src\/[^/]+|indexer\/[^/]+|scripts\/[^/]+)/.exec(url);
  if (ours) return ours[1].replace(/\.ts$/, "");
  if (url.startsWith("node:")) return url.split("/").slice(0, 2).join("/");
  return url;
}

function summarise(profile: CpuProfile, fromUs: number, toUs: number) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const buckets = new Map<string, number>();
  const functions = new Map<string, number>();
  let at = profile.startTime;
  let total = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    at += profile.timeDeltas[i];
    if (at < fromUs || at > toUs) continue;
    const weight = profile.timeDeltas[i + 1] ?? 0;
    const node = byId.get(profile.samples[i])!;
    const { functionName, url, lineNumber } = node.callFrame;
    if (functionName === "(idle)") continue;
    total += weight;
    const bucket = bucketOf(url, functionName);
    buckets.set(bucket, (buckets.get(bucket) ?? 0) + weight);
    const fn = `${functionName || "(anonymous)"} ${url ? `${url.replace(/^.*\/(node_modules|api|indexer)\//, "$1/")}:${lineNumber + 1}` : ""}`;
    functions.set(fn, (functions.get(fn) ?? 0) + weight);
  }
  const top = (map: Map<string, number>, n: number) => [...map].sort((a, b) => b[1] - a[1]).slice(0, n);
  return { totalUs: total, buckets: top(buckets, 15), functions: top(functions, 20) };
}

const profileDir = await mkdtemp(path.join(os.tmpdir(), "bench-profile-"));
// Every Node process the stack starts inherits it (the API processes through the stack's env, Ponder through ours).
process.env.NODE_OPTIONS = `${process.env.NODE_OPTIONS ?? ""} --cpu-prof --cpu-prof-dir=${profileDir}`.trim();
const env = await startBenchEnvironment(MODE);
delete process.env.NODE_OPTIONS;
const processes = env.meter.named();
let window: [number, number];
try {
  await setUpParallelReview(env);
  const write = async () => {
    const answer = await env.request("POST", "/requests", env.applicantToken, {
      applicantId: env.applicantId,
      requestType: "TRADE_LICENSE",
    });
    if (answer.status !== 201) throw new Error(`POST /requests answered ${answer.status}`);
  };
  await runConcurrently(64, CLIENTS, write); // warm-up: JIT, pools, caches
  const from = Number(process.hrtime.bigint() / 1000n);
  const ms = await runConcurrently(WRITES, CLIENTS, write);
  window = [from, Number(process.hrtime.bigint() / 1000n)];
  say(`${MODE}: ${WRITES} writes from ${CLIENTS} clients in ${(ms / 1000).toFixed(1)} s`);
} finally {
  await env.close().catch(() => {});
}

const files = (await readdir(profileDir)).filter((f) => f.endsWith(".cpuprofile"));
console.log("Shares are what to read: on a busy machine a sample also carries the time its process waited for a core.");
for (const { name, pid } of processes) {
  const file = files.find((f) => f.includes(`.${pid}.`));
  if (!file) {
    console.log(`\n${name} (pid ${pid}): no profile (not a Node process, or it did not exit cleanly)`);
    continue;
  }
  const profile = JSON.parse(await readFile(path.join(profileDir, file), "utf8")) as CpuProfile;
  const summary = summarise(profile, window![0], window![1]);
  const perWrite = (us: number) => (us / 1000 / WRITES).toFixed(2);
  console.log(`\n${name} (pid ${pid}): ${perWrite(summary.totalUs)} CPU-ms sampled per write (JavaScript thread)`);
  console.log("  by package / folder (CPU-ms per write):");
  for (const [bucket, us] of summary.buckets) console.log(`    ${perWrite(us).padStart(6)}  ${bucket}`);
  console.log("  by function, self time (CPU-ms per write):");
  for (const [fn, us] of summary.functions) console.log(`    ${perWrite(us).padStart(6)}  ${fn}`);
}
await rm(profileDir, { recursive: true, force: true });
