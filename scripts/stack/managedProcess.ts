/**
 * A child process of the stack: Node running a script, its output appended to DATA_DIR/logs/<name>.log, stopped
 * with SIGTERM (then SIGKILL after a grace period). `onExit` lets the supervisor react to an unexpected exit.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createWriteStream } from "node:fs";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { writePid } from "./pidFile.ts";

export interface ManagedProcess {
  name: string;
  child: ChildProcess;
  pid: number | undefined;
  exited: Promise<number | null>;
  isRunning(): boolean;
  /** True once stop() or kill() was called: an exit after that is ordered, not a crash. */
  stopRequested(): boolean;
  stop(graceMs?: number): Promise<void>;
  kill(): Promise<void>;
  /** Last lines of output, for error messages. */
  tail(): string;
}

export interface SpawnOptions {
  name: string;
  script: string;
  args?: string[];
  env: NodeJS.ProcessEnv;
  cwd?: string;
  /** Output appended to <logDir>/<name>.log; unset: not kept in a file (echo it then). */
  logDir?: string;
  /** Also copy output to the supervisor's stdout. */
  echo?: boolean;
  ipc?: boolean;
  /** Written as soon as the process exists, so a killed supervisor's next start can stop it. */
  pidFile?: { dataDir: string; name: string };
}

export async function spawnNode(options: SpawnOptions): Promise<ManagedProcess> {
  if (options.logDir) await mkdir(options.logDir, { recursive: true });
  const log = options.logDir && createWriteStream(path.join(options.logDir, `${options.name}.log`), { flags: "a" });
  const child = spawn(process.execPath, [options.script, ...(options.args ?? [])], {
    cwd: options.cwd,
    env: options.env,
    stdio: options.ipc ? ["ignore", "pipe", "pipe", "ipc"] : ["ignore", "pipe", "pipe"],
  });
  if (options.pidFile) await writePid(options.pidFile.dataDir, options.pidFile.name, child.pid);
  const lines: string[] = [];
  const capture = (chunk: Buffer) => {
    if (log) log.write(chunk);
    if (options.echo) process.stdout.write(chunk);
    lines.push(...chunk.toString().split("\n").filter(Boolean));
    if (lines.length > 40) lines.splice(0, lines.length - 40);
  };
  child.stdout?.on("data", capture);
  child.stderr?.on("data", capture);
  let running = true;
  let requested = false;
  const exited = new Promise<number | null>((resolve) =>
    child.once("exit", (code) => {
      running = false;
      if (log) log.end();
      resolve(code);
    }),
  );
  return {
    name: options.name,
    child,
    pid: child.pid,
    exited,
    isRunning: () => running,
    stopRequested: () => requested,
    tail: () => lines.join("\n"),
    async stop(graceMs = 10_000) {
      requested = true;
      if (!running) return;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
      await exited;
      clearTimeout(timer);
    },
    async kill() {
      requested = true;
      if (!running) return;
      child.kill("SIGKILL");
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
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!processHandle.isRunning()) throw new Error(`${what} exited during start-up:\n${processHandle.tail()}`);
    if (await ready().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what} not ready after ${timeoutMs} ms:\n${processHandle.tail()}`);
}
