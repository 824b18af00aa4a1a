/**
 * `npx node scripts/bench/readCost.ts`: the bench's read phase alone, for working on the read path: the embedded
 * bench stack, READ_COST_SEED requests seeded (default 2,000), then the bench's reads (detail, filtered list,
 * verification and the bare-server reference, 32 clients, READ_COST_SECONDS each, default 5), printing the CPU-ms
 * per read of each process. READ_COST_PROFILE_DIR=DIR: every Node process of the stack writes a V8 CPU profile there
 * when it stops. `npm run bench` is the measurement of record.
 */
import { setUpParallelReview } from "./approvalThroughput.ts";
import { startBenchEnvironment } from "./benchEnvironment.ts";
import { measureReadLatency } from "./readLatency.ts";
import { seedRequests } from "./seedRequests.ts";

const seed = Number(process.env.READ_COST_SEED ?? 2_000);
const seconds = Number(process.env.READ_COST_SECONDS ?? 5);
const profileDir = process.env.READ_COST_PROFILE_DIR;
// Node refuses --cpu-prof in the NODE_OPTIONS it starts with, so it is set here, for the stack's processes only.
if (profileDir) process.env.NODE_OPTIONS = `${process.env.NODE_OPTIONS ?? ""} --cpu-prof --cpu-prof-dir=${profileDir}`;
const env = await startBenchEnvironment("automine");
if (profileDir) delete process.env.NODE_OPTIONS;
try {
  await setUpParallelReview(env); // the workflows the seeded requests are pinned to
  const seeded = await seedRequests(env, seed);
  for (const result of await measureReadLatency(env, seeded, seconds, 32)) {
    const { cpu, requests } = result;
    console.log(
      `\n${result.endpoint}: ${requests} reads, p50 ${result.p50.toFixed(1)} / p95 ${result.p95.toFixed(1)} ms, machine ${cpu.machineBusyCores.toFixed(2)} cores busy`,
    );
    for (const line of cpu.lines)
      if (line.ms > 0) console.log(`  ${(line.ms / requests).toFixed(3).padStart(8)}  ${line.name}`);
    console.log(`  ${(cpu.stackMs / requests).toFixed(3).padStart(8)}  stack total (CPU-ms per read)`);
  }
} finally {
  await env.close();
}
