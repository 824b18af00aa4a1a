/**
 * CPU time of the stack's processes (pidusage: user + system of each process), sampled every 200 ms during a
 * measurement so that a process that ends meanwhile is counted up to its last sample. Each process is charged to the
 * first named process above it (API processes, workers, Ponder, the chain), and a Postgres backend to the process
 * holding the other end of its connection (`ss -tnp`), so the table can say "Postgres for Ponder" apart from
 * "Postgres for api".
 */
import { execFile } from "node:child_process";
import { readdirSync } from "node:fs";
import os from "node:os";
import { promisify } from "node:util";
import pidusage from "pidusage";

export interface NamedProcess {
  /** Shown in the table, e.g. "api", "worker-1", "indexer (Ponder)", "chain (anvil)". */
  name: string;
  pid: number;
}

export interface CpuUsage {
  wallMs: number;
  /** CPU ms per line of the table over the interval, the lines of the stack first. */
  lines: { name: string; ms: number; stack: boolean }[];
  /** CPU ms of the stack (every line but the load generator's). */
  stackMs: number;
  /** Cores the whole machine had busy on average (every process, other users' too). */
  machineBusyCores: number;
  /** Blocks the chain added meanwhile (when the meter knows the chain's head): Ponder's cost is per block. */
  blocks?: number;
  /** Postgres processes that ended during the measurement, by line (e.g. "Postgres for api": 3). */
  ended: Record<string, number>;
}

export const LOAD_GENERATOR = "bench process (load generator; not the stack)";
const SERVER_LINE = "Postgres: server and background processes";

/** What to measure; `named` is asked at each measurement: a process the stack restarted is found under its new pid. */
export interface StackCpuMeter {
  named: () => NamedProcess[];
  /** The Postgres server: its backends are charged to their clients. */
  postgresPid?: number;
  /** The chain's head block number, read around a measurement. */
  head?: () => Promise<number>;
  /** Sampling period, ms (default 200). */
  sampleMs?: number;
}

/** Every process's CPU ms and parent, by pid. */
async function allProcesses(): Promise<Map<number, { ms: number; ppid: number }>> {
  const pids = readdirSync("/proc").filter((name) => /^\d+$/.test(name));
  const stats = await pidusage(pids).catch(() => ({}) as Record<string, pidusage.Status>);
  // A process that ended between the listing and the read has no entry.
  return new Map(Object.values(stats).flatMap((s) => (s ? [[s.pid, { ms: s.ctime, ppid: s.ppid }]] : [])));
}

/** pid → the pids at the other end of its local TCP connections (a socket L→P meets the socket P→L). */
async function connectionPeers(): Promise<Map<number, number[]>> {
  const { stdout } = await promisify(execFile)("ss", ["-tnpH"]);
  const sockets = stdout.split("\n").flatMap((line) => {
    const [, , , local, peer, users] = line.trim().split(/\s+/);
    const pid = /pid=(\d+)/.exec(users ?? "")?.[1];
    return pid ? [{ pid: Number(pid), local, peer }] : [];
  });
  const holder = new Map(sockets.map((s) => [`${s.local} ${s.peer}`, s.pid]));
  const peers = new Map<number, number[]>();
  for (const { pid, local, peer } of sockets) {
    const other = holder.get(`${peer} ${local}`);
    if (other) peers.set(pid, [...(peers.get(pid) ?? []), other]);
  }
  return peers;
}

/** CPU used by the stack while `work` runs. */
export async function measureCpu<T>(
  meter: StackCpuMeter,
  work: () => Promise<T>,
): Promise<{ result: T; cpu: CpuUsage }> {
  const named = new Map(meter.named().map((p) => [p.pid, p.name]));
  const lineOf = new Map<number, string | null>(); // null: not the stack's
  const first = new Map<number, number>();
  const last = new Map<number, number>();
  let peers: Map<number, number[]> | undefined;
  const owner = (pid: number, procs: Map<number, { ppid: number }>): string | null => {
    for (let p: number | undefined = pid; p && p > 1; p = procs.get(p)?.ppid) if (named.has(p)) return named.get(p)!;
    return null;
  };
  const sample = async (initial: boolean) => {
    const procs = await allProcesses();
    for (const [pid, { ms, ppid }] of procs) {
      if (!lineOf.has(pid)) {
        if (pid === meter.postgresPid) lineOf.set(pid, SERVER_LINE);
        else if (ppid === meter.postgresPid && meter.postgresPid) {
          peers ??= await connectionPeers();
          const client = (peers.get(pid) ?? []).map((p) => owner(p, procs)).find((o) => o);
          lineOf.set(pid, client ? `Postgres for ${client}` : SERVER_LINE);
        } else lineOf.set(pid, owner(pid, procs));
      }
      if (lineOf.get(pid) === null) continue;
      // A process first seen after the start began during the measurement: its whole life counts.
      if (!first.has(pid)) first.set(pid, initial ? ms : 0);
      last.set(pid, ms);
    }
    peers = undefined;
    return procs;
  };
  const machine = () =>
    os.cpus().reduce(
      (sum, c) => ({
        busy: sum.busy + c.times.user + c.times.nice + c.times.sys + c.times.irq,
        total: sum.total + c.times.user + c.times.nice + c.times.sys + c.times.irq + c.times.idle,
      }),
      { busy: 0, total: 0 },
    );

  const headBefore = await meter.head?.();
  await sample(true);
  const [machineBefore, ownBefore, started] = [machine(), process.cpuUsage(), performance.now()];
  let [sampling, failed] = [Promise.resolve(), undefined as unknown];
  const timer = setInterval(
    () =>
      (sampling = sampling
        .then(() => sample(false))
        .then(
          () => {},
          (error) => void (failed ??= error),
        )),
    meter.sampleMs ?? 200,
  );
  let result: T;
  try {
    result = await work();
  } finally {
    clearInterval(timer);
  }
  await sampling;
  if (failed) throw failed;
  const alive = await sample(false);
  const [machineAfter, own, wallMs] = [machine(), process.cpuUsage(ownBefore), performance.now() - started];
  const headAfter = await meter.head?.();
  pidusage.clear();

  const ms = new Map<string, number>();
  const ended: Record<string, number> = {};
  for (const [pid, at] of last) {
    const line = lineOf.get(pid)!;
    ms.set(line, (ms.get(line) ?? 0) + Math.max(0, at - first.get(pid)!));
    if (!alive.has(pid) && (pid === meter.postgresPid || line.startsWith("Postgres")))
      ended[line] = (ended[line] ?? 0) + 1;
  }
  const lines = [...ms].map(([name, value]) => ({ name, ms: value, stack: true })).sort((a, b) => b.ms - a.ms);
  lines.push({ name: LOAD_GENERATOR, ms: (own.user + own.system) / 1000, stack: false });
  const busy = machineAfter.busy - machineBefore.busy;
  const total = machineAfter.total - machineBefore.total;
  return {
    result,
    cpu: {
      wallMs,
      lines,
      stackMs: lines.filter((l) => l.stack).reduce((sum, l) => sum + l.ms, 0),
      machineBusyCores: total > 0 ? (busy / total) * os.cpus().length : 0,
      blocks: headBefore !== undefined && headAfter !== undefined ? headAfter - headBefore : undefined,
      ended,
    },
  };
}
