/**
 * `node scripts/measureLifecycle.ts`: what a person waits for and what the stack costs idle, measured as a terminal
 * runs it. `npm start` on a fresh data directory (time to "Press Ctrl-C to stop"), its idle CPU (utime + stime from
 * /proc of every process of npm's group and the supervisor's, over MEASURE_IDLE_S seconds after MEASURE_SETTLE_S of
 * settling), the stop after a SIGINT to npm's process group (Ctrl-C) until npm exits; then `npm start` again on the
 * same, now existing, data directory and its stop. The machine's load is reported beside the numbers: measure on a
 * quiet machine. Default settings otherwise (API_PROCESSES one per core); free ports, a temporary DATA_DIR.
 */
import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "./stack/ports.ts";
import { stackProcesses, TICKS_PER_SECOND, type ProcessInfo } from "./stack/processTable.ts";

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const IDLE_S = Number(process.env.MEASURE_IDLE_S ?? 60);
const SETTLE_S = Number(process.env.MEASURE_SETTLE_S ?? 10);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `npm start` as a terminal's foreground job: the leader of a process group of its own. */
function npmStart(env: NodeJS.ProcessEnv) {
  const startedAt = Date.now();
  const child = spawn("npm", ["start"], { cwd: REPO_ROOT, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
  let output = "";
  child.stdout!.on("data", (d) => (output += d));
  child.stderr!.on("data", (d) => (output += d));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, startedAt, exited, output: () => output };
}

type Run = ReturnType<typeof npmStart>;

async function untilReady(run: Run): Promise<number> {
  while (!run.output().includes("Press Ctrl-C to stop")) {
    if (run.child.exitCode !== null) throw new Error(`npm start exited:\n${run.output()}`);
    if (Date.now() - run.startedAt > 600_000) throw new Error(`not ready after 10 min:\n${run.output()}`);
    await sleep(50);
  }
  return (Date.now() - run.startedAt) / 1000;
}

/** Ctrl-C: SIGINT to npm's whole process group; seconds until npm exits, its status, and what is left running. */
async function stop(run: Run, dataDir: string, supervisor: number) {
  const signalled = Date.now();
  process.kill(-run.child.pid!, "SIGINT");
  const code = await run.exited;
  const seconds = (Date.now() - signalled) / 1000;
  const left = (await stackProcesses([run.child.pid!, supervisor], dataDir)).filter((p) => p.state !== "Z");
  return { seconds, code, stopped: run.output().includes("Stopped."), left: left.map((p) => p.command) };
}

/** Busy and total jiffies of the whole machine (/proc/stat), for how busy it was meanwhile. */
async function machineTicks(): Promise<{ busy: number; total: number }> {
  const fields = (await readFile("/proc/stat", "utf8")).split("\n")[0].trim().split(/\s+/).slice(1).map(Number);
  const total = fields.reduce((a, b) => a + b, 0);
  return { busy: total - fields[3] - fields[4], total };
}

/** CPU seconds used by the stack's processes during `seconds` (a process started meanwhile counts whole). */
async function idleCpu(groups: number[], dataDir: string, seconds: number) {
  const before = new Map((await stackProcesses(groups, dataDir)).map((p) => [p.pid, p.utime + p.stime]));
  const machineBefore = await machineTicks();
  const loadBefore = (await readFile("/proc/loadavg", "utf8")).trim();
  await sleep(seconds * 1000);
  const after = await stackProcesses(groups, dataDir);
  const machineAfter = await machineTicks();
  const used = (p: ProcessInfo) => p.utime + p.stime - (before.get(p.pid) ?? 0);
  const ticks = after.reduce((sum, p) => sum + used(p), 0);
  const cores = os.cpus().length;
  const kinds: Record<string, { processes: number; cpuSeconds: number }> = {};
  for (const p of after) {
    // The program, or for Node the script it runs; Postgres's processes by their title.
    const [program, script] = p.command.split(" ").map((part) => path.basename(part));
    const kind = p.command.startsWith("postgres") ? "postgres" : program === "node" ? script : program;
    kinds[kind] ??= { processes: 0, cpuSeconds: 0 };
    kinds[kind].processes += 1;
    kinds[kind].cpuSeconds += used(p) / TICKS_PER_SECOND;
  }
  for (const kind of Object.values(kinds)) kind.cpuSeconds = Math.round(kind.cpuSeconds * 100) / 100;
  return {
    processes: after.length,
    kinds,
    cpuSeconds: ticks / TICKS_PER_SECOND,
    coresUsed: ticks / TICKS_PER_SECOND / seconds,
    machineBusyCores: ((machineAfter.busy - machineBefore.busy) / (machineAfter.total - machineBefore.total)) * cores,
    cores,
    loadavgBefore: loadBefore,
    loadavgAfter: (await readFile("/proc/loadavg", "utf8")).trim(),
  };
}

async function supervisorPid(dataDir: string): Promise<number> {
  return JSON.parse(await readFile(path.join(dataDir, "run", "stack.json"), "utf8")).pid;
}

async function main() {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), "measure-lifecycle-"));
  const env = {
    ...process.env,
    DATA_DIR: dataDir,
    PORT: String(await freePort()),
    CHAIN_PORT: String(await freePort()),
    EMBEDDED_PG_PORT: String(await freePort()),
    INDEXER_PORT: String(await freePort()),
    DATABASE_URL: "",
    CHAIN_RPC_URL: "",
  };
  const report: Record<string, unknown> = { loadavgAtStart: (await readFile("/proc/loadavg", "utf8")).trim() };
  let run: Run | undefined;
  try {
    run = npmStart(env);
    report.readyFreshSeconds = await untilReady(run);
    const supervisor = await supervisorPid(dataDir);
    await sleep(SETTLE_S * 1000);
    report.idle = { seconds: IDLE_S, ...(await idleCpu([run.child.pid!, supervisor], dataDir, IDLE_S)) };
    report.stopFresh = await stop(run, dataDir, supervisor);

    run = npmStart(env);
    report.readyExistingSeconds = await untilReady(run);
    report.stopExisting = await stop(run, dataDir, await supervisorPid(dataDir));
    report.loadavgAtEnd = (await readFile("/proc/loadavg", "utf8")).trim();
    console.log(JSON.stringify(report, null, 2));
  } finally {
    if (run && run.child.exitCode === null && run.child.signalCode === null) process.kill(-run.child.pid!, "SIGINT");
    await run?.exited;
    await rm(dataDir, { recursive: true, force: true });
  }
}

await main();
