/**
 * The processes of a running stack, from Linux's /proc: those of given process groups (a terminal's foreground job,
 * the supervisor's own group), those naming a data directory in their command line or environment, and their
 * descendants. For the lifecycle test (nothing left after Ctrl-C) and for measuring the stack's CPU time
 * (scripts/measureLifecycle.ts).
 */
import { readdir, readFile } from "node:fs/promises";

export type ProcessInfo = NonNullable<Awaited<ReturnType<typeof processInfo>>>;

/** Linux's USER_HZ: /proc reports CPU times in these ticks. */
export const TICKS_PER_SECOND = 100;

/**
 * Every process whose group is one of `groups`, or whose command line or environment names `dataDir`, and all their
 * descendants (Postgres leads a session of its own and rewrites its children's environment for their titles).
 */
export async function stackProcesses(groups: number[], dataDir?: string): Promise<ProcessInfo[]> {
  const all: ProcessInfo[] = [];
  for (const entry of await readdir("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    const info = await processInfo(pid);
    if (info) all.push(info);
  }
  const found = new Set<number>();
  for (const info of all)
    if (groups.includes(info.pgid) || (dataDir && (await names(info.pid, dataDir)))) found.add(info.pid);
  // Their descendants: until no process joins.
  for (let size = -1; size !== found.size;) {
    size = found.size;
    for (const info of all) if (found.has(info.ppid)) found.add(info.pid);
  }
  return all.filter((info) => found.has(info.pid));
}

/** One process's /proc/PID/stat, or undefined when it is gone. */
export async function processInfo(pid: number) {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => undefined);
  if (!stat) return undefined;
  // "pid (comm) state ppid pgrp …": comm may hold spaces and parentheses, so split after its last ')'.
  const close = stat.lastIndexOf(")");
  const fields = stat.slice(close + 2).split(" ");
  const command = (await readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "")).replaceAll("\0", " ").trim();
  return {
    pid,
    /** R, S, D, Z (a zombie: exited, not yet reaped) … */
    state: fields[0],
    ppid: Number(fields[1]),
    pgid: Number(fields[2]),
    /** CPU time in clock ticks (USER_HZ, 100 per second on Linux): user and system. */
    utime: Number(fields[11]),
    stime: Number(fields[12]),
    command: command || stat.slice(stat.indexOf("(") + 1, close),
  };
}

async function names(pid: number, text: string): Promise<boolean> {
  for (const file of ["cmdline", "environ"]) {
    const content = await readFile(`/proc/${pid}/${file}`, "utf8").catch(() => "");
    if (content.includes(text)) return true;
  }
  return false;
}
