/**
 * `npx node scripts/bench/writeCost.ts [automine|interval1s]`: the write path alone, for working on it: starts the
 * bench stack in the mode given, then POST /requests from WRITE_COST_CLIENTS clients (default 32; 128 with 1 s
 * blocks) WRITE_COST_WRITES times (default 300), and prints the CPU-ms per write of each process of the stack (from
 * /proc, as `npm run bench` measures it), the blocks mined and the throughput. `npm run bench` is the measurement
 * of record; this is its write phase, quicker to repeat. WRITE_COST_PROFILE_DIR=DIR: every Node process of the stack
 * writes a V8 CPU profile there when it stops (node --cpu-prof).
 */
import { setUpParallelReview } from "./approvalThroughput.ts";
import { startBenchEnvironment, type ChainMode } from "./benchEnvironment.ts";
import { measureWriteThroughput } from "./writeThroughput.ts";

const mode = (process.argv[2] ?? "automine") as ChainMode;
if (mode !== "automine" && mode !== "interval1s") throw new Error("mode is automine or interval1s");
const clients = Number(process.env.WRITE_COST_CLIENTS ?? (mode === "automine" ? 32 : 128));
const writes = Number(process.env.WRITE_COST_WRITES ?? 300);

const profileDir = process.env.WRITE_COST_PROFILE_DIR;
// Node refuses --cpu-prof in the NODE_OPTIONS it starts with, so it is set here, for the stack's processes only.
if (profileDir) process.env.NODE_OPTIONS = `${process.env.NODE_OPTIONS ?? ""} --cpu-prof --cpu-prof-dir=${profileDir}`;
const env = await startBenchEnvironment(mode);
if (profileDir) delete process.env.NODE_OPTIONS;
try {
  await setUpParallelReview(env);
  await measureWriteThroughput(env, clients, Math.min(64, writes)); // warm-up: connections, JIT, prepared statements
  const result = await measureWriteThroughput(env, clients, writes);
  const { cpu } = result;
  console.log(
    `\n${mode}: ${writes} writes from ${clients} clients, ${cpu.blocks ?? "?"} blocks, machine ${cpu.machineBusyCores.toFixed(2)} cores busy`,
  );
  for (const line of cpu.lines) console.log(`  ${(line.ms / writes).toFixed(2).padStart(7)}  ${line.name}`);
  console.log(`  ${(cpu.stackMs / writes).toFixed(2).padStart(7)}  stack total (CPU-ms per write)`);
} finally {
  await env.close();
}
