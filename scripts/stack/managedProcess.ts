/**
 * A child process of the stack: its output appended to <logDir>/<name>.log, its pid in DATA_DIR/run/<name>.pid while
 * it runs (so a killed supervisor's next start can stop it), stopped with SIGTERM, then SIGKILL after a grace period.
 */
import { spawn } from "node:child_process";
import { createWriteStream } from "node:fs";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

export type ManagedProcess = Awaited<ReturnType<typeof spawnNode>>;

export interface SpawnOptions {
  name: string;
  /** A script run by this Node, or `command` for another program. */
  script?: string;
  command?: string;
  args?: string[];
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Output appended to <logDir>/<name>.log (unset: not kept, echo it then), and copied to stdout with `echo`. */
  logDir?: string;
  echo?: boolean;
  ipc?: boolean;
  /** Where DATA_DIR/run/<name>.pid is kept. */
  dataDir?: string;
}

export async function spawnNode(options: SpawnOptions) {
  if (options.logDir) await mkdir(options.logDir, { recursive: true });
  const log = options.logDir && createWriteStream(path.join(options.logDir, `${options.name}.log`), { flags: "a" });
  const [command, args] = options.command
    ? [options.command, options.args ?? []]
    : [process.execPath, [options.script!, ...(options.args ?? [])]];
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: options.env,
    stdio: ["ignore", "pipe", "pipe", ...(options.ipc ? ["ipc" as const] : [])],
  });
  const pidFile = options.dataDir && child.pid && path.join(options.dataDir, "run", `${options.name}.pid`);
  if (pidFile) await mkdir(path.dirname(pidFile), { recursive: true }).then(() => writeFile(pidFile, `${child.pid}\n`));
  const lines: string[] = [];
  const capture = (chunk: Buffer) => {
    if (log) log.write(chunk);
    if (options.echo) process.stdout.write(chunk);
    lines.push(...chunk.toString().split("\n").filter(Boolean));
    lines.splice(0, lines.length - 40);
  };
  for (const output of [child.stdout!, child.stderr!]) output.on("data", capture);
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve)).then(async (code) => {
    if (log) log.end();
    // A restart may have written its own pid there already.
    if (pidFile && (await readFile(pidFile, "utf8").catch(() => "")).trim() === String(child.pid))
      await rm(pidFile, { force: true });
    return code;
  });
  const isRunning = () => child.exitCode === null && child.signalCode === null;
  let requested = false;
  return {
    name: options.name,
    child,
    pid: child.pid,
    /** Resolves with the exit code once it exited and its pid file is gone. */
    exited,
    isRunning,
    /** True once stop() or kill() was called: an exit after that is ordered, not a crash. */
    stopRequested: () => requested,
    /** Last lines of output, for error messages. */
    tail: () => lines.join("\n"),
    async stop(graceMs = 10_000) {
      requested = true;
      if (isRunning()) child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
      await exited;
      clearTimeout(timer);
    },
    async kill() {
      requested = true;
      if (isRunning()) child.kill("SIGKILL");
      await exited;
    },
  };
}

/** Polls `ready` until true; fails early if the process exits. */
export async function waitUntil(
  processHandle: ManagedProcess,
  ready: () => Promise<boolean>,
  timeoutMs: number,
  what: string,
): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; await sleep(50)) {
    if (!processHandle.isRunning()) throw new Error(`${what} exited during start-up:\n${processHandle.tail()}`);
    if (await ready().catch(() => false)) return;
  }
  throw new Error(`${what} not ready after ${timeoutMs} ms:\n${processHandle.tail()}`);
}
