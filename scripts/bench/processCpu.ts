/**
 * CPU time of the stack's processes, read from /proc: each named process (API processes, workers, Ponder, the
 * chain, the Postgres server) with every process below it. A process's utime + stime + cutime + cstime counts its
 * own time (all threads) and that of its children that have ended (once waited for); summed over the live processes
 * of a tree, nothing is counted twice, and a child that ends between two snapshots moves into its parent's
 * cutime/cstime without being lost.
 *
 * Postgres backends are charged to their client: a backend's title (`/proc/PID/cmdline`) names the client's port;
 * the socket bound to that port (`/proc/net/tcp*`) belongs to one of the stack's processes (`/proc/PID/fd`). So the
 * table can say "Postgres for Ponder" apart from "Postgres for the API".
 */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, readlinkSync } from "node:fs";

/** Clock ticks per second of the times in /proc/PID/stat (CLK_TCK; 100 on Linux almost everywhere). */
export const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
  } catch {
    return 100;
  }
})();

interface ProcStat {
  pid: number;
  ppid: number;
  /** utime + stime + cutime + cstime, in clock ticks. */
  ticks: number;
}

/** Parses /proc/PID/stat: the command name is in parentheses and may hold spaces or parentheses itself. */
export function parseStat(pid: number, text: string): ProcStat {
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  // fields[0] is field 3 (state): ppid is field 4, utime..cstime are fields 14..17.
  const at = (field: number) => Number(fields[field - 3]);
  return { pid, ppid: at(4), ticks: at(14) + at(15) + at(16) + at(17) };
}

function readStat(pid: number): ProcStat | undefined {
  try {
    return parseStat(pid, readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return undefined; // ended meanwhile
  }
}

function allProcesses(): ProcStat[] {
  const stats: ProcStat[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const stat = readStat(Number(name));
    if (stat) stats.push(stat);
  }
  return stats;
}

/** The whole machine's busy and total time (all CPUs, every user), in clock ticks, from /proc/stat. */
function machineTicks(): { busy: number; total: number } {
  const [, ...values] = readFileSync("/proc/stat", "utf8").split("\n")[0].trim().split(/\s+/);
  const [user, nice, system, idle, iowait, irq, softirq, steal] = values.map(Number);
  const busy = user + nice + system + irq + softirq + steal;
  return { busy, total: busy + idle + iowait };
}

export interface NamedProcess {
  /** Shown in the table, e.g. "api", "worker-1", "indexer (Ponder)", "chain (anvil)". */
  name: string;
  pid: number;
}

export interface CpuSnapshot {
  at: number;
  machine: { busy: number; total: number };
  /** CPU ms per line of the table. */
  ms: Map<string, number>;
  /** Postgres processes alive at the snapshot: their line and CPU ms (own and ended children's). */
  postgresChildren: Map<number, { line: string; ms: number }>;
  /** The Postgres server's own CPU ms, with every child that ended (in its cutime/cstime). */
  postgresServerMs: number;
}

const SERVER_LINE = "Postgres: server, other background and ended connections";

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
  /**
   * Postgres processes that ended during the measurement, by label (e.g. "Postgres: parallel worker": 120). Their
   * CPU is in the server's line; seen by sampling, so one that lived less than the sampling period may be missed.
   */
  ended: Record<string, number>;
}

export const LOAD_GENERATOR = "bench process (load generator; not the stack)";

/**
 * Reads the CPU time of the stack's named processes and their descendants. `postgres` is the Postgres server's
 * pid (its backends are charged to their clients); `loadGenerator` is this process, shown apart and never counted
 * in the stack.
 */
export class StackCpuMeter {
  readonly #named: () => NamedProcess[];
  readonly #postgres?: NamedProcess;
  readonly #loadGenerator: number;
  /** Backend pid → the line it is charged to (a backend serves one connection for its whole life). */
  readonly #backendOwner = new Map<number, string>();

  /** The chain's head block number, read around a measurement by `measureCpu`. */
  readonly head?: () => Promise<number>;

  /** `named` is asked at each snapshot: a process the stack restarted is found under its new pid. */
  constructor(
    named: () => NamedProcess[],
    postgresPid: number | undefined,
    options: { loadGenerator?: number; head?: () => Promise<number> } = {},
  ) {
    const { loadGenerator = process.pid, head } = options;
    this.head = head;
    this.#named = named;
    this.#postgres = postgresPid ? { name: "Postgres", pid: postgresPid } : undefined;
    this.#loadGenerator = loadGenerator;
  }

  snapshot(): CpuSnapshot {
    const { byPid, subtree, owners, named } = this.#scan();
    const toMs = (ticks: number) => (ticks * 1000) / CLOCK_TICKS;
    const ms = new Map<string, number>();
    const add = (name: string, ticks: number) => ms.set(name, (ms.get(name) ?? 0) + toMs(ticks));
    for (const proc of named)
      add(
        proc.name,
        subtree(proc.pid).reduce((sum, s) => sum + s.ticks, 0),
      );
    // The load generator alone: the stack's processes are its children, counted on their own lines.
    add(LOAD_GENERATOR, byPid.get(this.#loadGenerator)?.ticks ?? 0);
    const postgresChildren = new Map<number, { line: string; ms: number }>();
    let postgresServerMs = 0;
    if (this.#postgres) {
      postgresServerMs = toMs(byPid.get(this.#postgres.pid)?.ticks ?? 0);
      const backends = subtree(this.#postgres.pid).slice(1);
      this.#label(
        backends.map((b) => b.pid),
        owners,
      );
      for (const backend of backends)
        postgresChildren.set(backend.pid, { line: this.#backendOwner.get(backend.pid)!, ms: toMs(backend.ticks) });
    }
    return { at: performance.now(), machine: machineTicks(), ms, postgresChildren, postgresServerMs };
  }

  /**
   * Notes the Postgres processes alive now (no CPU read): called every few hundred ms during a measurement, it
   * finds the short-lived ones (parallel workers, connections opened and closed) whose CPU ends up, unnamed, in the
   * server's line. Returns their pids.
   */
  observe(): number[] {
    if (!this.#postgres) return [];
    const { subtree, owners } = this.#scan();
    const pids = subtree(this.#postgres.pid)
      .slice(1)
      .map((s) => s.pid);
    this.#label(pids, owners);
    return pids;
  }

  /** What a Postgres process was labelled (its client, or its kind). */
  labelOf(pid: number): string | undefined {
    return this.#backendOwner.get(pid);
  }

  #scan() {
    const stats = allProcesses();
    const children = new Map<number, ProcStat[]>();
    for (const stat of stats) children.set(stat.ppid, [...(children.get(stat.ppid) ?? []), stat]);
    const byPid = new Map(stats.map((s) => [s.pid, s]));
    const subtree = (pid: number): ProcStat[] => {
      const root = byPid.get(pid);
      if (!root) return [];
      const out = [root];
      for (let i = 0; i < out.length; i++) out.push(...(children.get(out[i].pid) ?? []));
      return out;
    };
    // The owners a Postgres client can be: the stack's processes and the load generator.
    const named = this.#named();
    const owners = new Map<number, string>();
    for (const proc of named) for (const s of subtree(proc.pid)) owners.set(s.pid, proc.name);
    owners.set(this.#loadGenerator, LOAD_GENERATOR);
    return { byPid, subtree, owners, named };
  }

  /** Labels the Postgres processes not labelled yet: by the client holding the socket, else by their kind. */
  #label(pids: number[], owners: Map<number, string>): void {
    const unresolved = pids.filter((pid) => !this.#backendOwner.has(pid));
    if (unresolved.length === 0) return;
    const found = this.#resolveClients(unresolved, owners);
    for (const pid of unresolved) this.#backendOwner.set(pid, found.get(pid) ?? backgroundName(pid));
  }

  /** Backend pid → "Postgres for NAME", NAME the stack process (or the load generator) holding the client socket. */
  #resolveClients(backends: number[], owners: Map<number, string>): Map<number, string> {
    const clientPort = new Map<number, number>();
    for (const pid of backends) {
      const title = (() => {
        try {
          return readFileSync(`/proc/${pid}/cmdline`, "utf8");
        } catch {
          return "";
        }
      })();
      // "postgres: user db 127.0.0.1(54321) idle": a client connection; background processes name no port.
      const port = /\((\d+)\)/.exec(title)?.[1];
      if (port) clientPort.set(pid, Number(port));
    }
    const result = new Map<number, string>();
    if (clientPort.size === 0) return result;
    // Socket inode of each local port (the client's end has the client port as its local port).
    const inodeOfPort = new Map<number, string>();
    for (const file of ["/proc/net/tcp", "/proc/net/tcp6"]) {
      let text = "";
      try {
        text = readFileSync(file, "utf8");
      } catch {
        continue;
      }
      for (const line of text.split("\n").slice(1)) {
        const columns = line.trim().split(/\s+/);
        if (columns.length < 10) continue;
        const localPort = parseInt(columns[1].split(":").at(-1)!, 16);
        if ([...clientPort.values()].includes(localPort)) inodeOfPort.set(localPort, columns[9]);
      }
    }
    const ownerOfInode = new Map<string, string>();
    for (const [pid, owner] of owners) {
      let fds: string[] = [];
      try {
        fds = readdirSync(`/proc/${pid}/fd`);
      } catch {
        continue;
      }
      for (const fd of fds) {
        try {
          const link = readlinkSync(`/proc/${pid}/fd/${fd}`);
          if (link.startsWith("socket:[")) ownerOfInode.set(link.slice(8, -1), owner);
        } catch {
          // closed meanwhile
        }
      }
    }
    for (const [pid, port] of clientPort) {
      const owner = ownerOfInode.get(inodeOfPort.get(port) ?? "");
      if (owner) result.set(pid, `Postgres for ${owner}`);
    }
    return result;
  }

  /** CPU used between two snapshots, line by line. */
  static usage(before: CpuSnapshot, after: CpuSnapshot): CpuUsage {
    const delta = new Map<string, number>();
    const add = (name: string, ms: number) => delta.set(name, (delta.get(name) ?? 0) + ms);
    for (const name of new Set([...before.ms.keys(), ...after.ms.keys()]))
      add(name, (after.ms.get(name) ?? 0) - (before.ms.get(name) ?? 0));
    // Postgres process by process: a backend that ended moved its whole life's CPU into the server's cutime, so
    // what it had at the first snapshot is taken off the server's growth (else it would count twice).
    for (const [pid, child] of after.postgresChildren)
      add(child.line, child.ms - (before.postgresChildren.get(pid)?.ms ?? 0));
    let endedBefore = 0;
    for (const [pid, child] of before.postgresChildren) {
      if (after.postgresChildren.has(pid)) continue;
      endedBefore += child.ms;
      add(child.line, 0); // the line stays in the table
    }
    if (before.postgresChildren.size + after.postgresChildren.size > 0 || after.postgresServerMs > 0) {
      add(SERVER_LINE, after.postgresServerMs - before.postgresServerMs - endedBefore);
    }
    const lines = [...delta]
      .map(([name, ms]) => ({ name, ms: Math.max(0, ms), stack: !name.includes(LOAD_GENERATOR) }))
      .sort((a, b) => Number(b.stack) - Number(a.stack) || b.ms - a.ms);
    const wallMs = after.at - before.at;
    const busy = after.machine.busy - before.machine.busy;
    const total = after.machine.total - before.machine.total;
    const cores = Math.max(1, cpuCount());
    return {
      wallMs,
      lines,
      stackMs: lines.filter((l) => l.stack).reduce((sum, l) => sum + l.ms, 0),
      machineBusyCores: total > 0 ? (busy / total) * cores : 0,
      ended: {},
    };
  }
}

/** A Postgres process that serves no client of ours, named by its title: "Postgres: autovacuum worker", … */
function backgroundName(pid: number): string {
  let title = "";
  try {
    title = readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ").trim();
  } catch {
    // ended meanwhile
  }
  const kind =
    /^postgres: (autovacuum|checkpointer|background writer|walwriter|logical replication|parallel worker)/.exec(
      title,
    )?.[1];
  return kind ? `Postgres: ${kind}` : SERVER_LINE;
}

function cpuCount(): number {
  return readFileSync("/proc/stat", "utf8")
    .split("\n")
    .filter((l) => /^cpu\d+ /.test(l)).length;
}

/** CPU used by the stack while `work` runs. */
export async function measureCpu<T>(
  meter: StackCpuMeter,
  work: () => Promise<T>,
): Promise<{ result: T; cpu: CpuUsage }> {
  const headBefore = await meter.head?.();
  const before = meter.snapshot();
  const seen = new Set(before.postgresChildren.keys());
  const sampler = setInterval(() => {
    for (const pid of meter.observe()) seen.add(pid);
  }, 200);
  let result: T;
  try {
    result = await work();
  } finally {
    clearInterval(sampler);
  }
  const after = meter.snapshot();
  const headAfter = await meter.head?.();
  const cpu = StackCpuMeter.usage(before, after);
  for (const pid of seen) {
    if (after.postgresChildren.has(pid)) continue;
    const label = meter.labelOf(pid) ?? SERVER_LINE;
    cpu.ended[label] = (cpu.ended[label] ?? 0) + 1;
  }
  if (headBefore !== undefined && headAfter !== undefined) cpu.blocks = headAfter - headBefore;
  return { result, cpu };
}
