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
}

export interface CpuUsage {
  wallMs: number;
  /** CPU ms per line of the table over the interval, the lines of the stack first. */
  lines: { name: string; ms: number; stack: boolean }[];
  /** CPU ms of the stack (every line but the load generator's). */
  stackMs: number;
  /** Cores the whole machine had busy on average (every process, other users' too) and how many it has. */
  machineBusyCores: number;
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

  /** `named` is asked at each snapshot: a process the stack restarted is found under its new pid. */
  constructor(named: () => NamedProcess[], postgresPid: number | undefined, loadGenerator = process.pid) {
    this.#named = named;
    this.#postgres = postgresPid ? { name: "Postgres", pid: postgresPid } : undefined;
    this.#loadGenerator = loadGenerator;
  }

  snapshot(): CpuSnapshot {
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
    const toMs = (ticks: number) => (ticks * 1000) / CLOCK_TICKS;
    const ms = new Map<string, number>();
    const add = (name: string, ticks: number) => ms.set(name, (ms.get(name) ?? 0) + toMs(ticks));
    // The owners a Postgres client can be: the stack's processes and the load generator.
    const owners = new Map<number, string>();
    for (const named of this.#named()) {
      const tree = subtree(named.pid);
      add(named.name, tree.reduce((sum, s) => sum + s.ticks, 0));
      for (const s of tree) owners.set(s.pid, named.name);
    }
    // The load generator alone: the stack's processes are its children, counted on their own lines.
    add(LOAD_GENERATOR, byPid.get(this.#loadGenerator)?.ticks ?? 0);
    owners.set(this.#loadGenerator, LOAD_GENERATOR);
    if (this.#postgres) {
      const server = byPid.get(this.#postgres.pid);
      // The server itself (with the backends that ended, in its cutime/cstime).
      if (server) add("Postgres: server, other background and ended connections", server.ticks);
      const unresolved: ProcStat[] = [];
      for (const backend of subtree(this.#postgres.pid).slice(1)) {
        const owner = this.#backendOwner.get(backend.pid);
        if (owner) add(owner, backend.ticks);
        else unresolved.push(backend);
      }
      if (unresolved.length > 0) {
        const found = this.#resolveClients(unresolved.map((b) => b.pid), owners);
        for (const backend of unresolved) {
          const owner = found.get(backend.pid) ?? backgroundName(backend.pid);
          this.#backendOwner.set(backend.pid, owner);
          add(owner, backend.ticks);
        }
      }
    }
    return { at: performance.now(), machine: machineTicks(), ms };
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
    const names = new Set([...before.ms.keys(), ...after.ms.keys()]);
    const lines = [...names]
      .map((name) => ({ name, ms: Math.max(0, (after.ms.get(name) ?? 0) - (before.ms.get(name) ?? 0)), stack: !name.includes(LOAD_GENERATOR) }))
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
  const kind = /^postgres: (autovacuum|checkpointer|background writer|walwriter|logical replication)/.exec(title)?.[1];
  return kind ? `Postgres: ${kind}` : "Postgres: server, other background and ended connections";
}

function cpuCount(): number {
  return readFileSync("/proc/stat", "utf8").split("\n").filter((l) => /^cpu\d+ /.test(l)).length;
}

/** CPU used by the stack while `work` runs. */
export async function measureCpu<T>(meter: StackCpuMeter, work: () => Promise<T>): Promise<{ result: T; cpu: CpuUsage }> {
  const before = meter.snapshot();
  const result = await work();
  const after = meter.snapshot();
  return { result, cpu: StackCpuMeter.usage(before, after) };
}
