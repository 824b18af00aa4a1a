/**
 * Pid files under DATA_DIR/run (managedProcess.ts writes them): if a previous supervisor was killed (SIGKILL) its
 * children survive it; the next start stops them before reusing their ports and data.
 */
import { readdir, readFile, rm } from "node:fs/promises";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

/** Whether a process with this id exists (signal 0 checks without signalling). */
export const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Sends `signal` and waits up to `waitMs` for the process to be gone; whether it is. */
export async function signalAndWait(pid: number, signal: NodeJS.Signals, waitMs: number): Promise<boolean> {
  process.kill(pid, signal);
  for (const deadline = Date.now() + waitMs; alive(pid) && Date.now() < deadline;) await sleep(50);
  return !alive(pid);
}

/** Every child recorded under DATA_DIR/run (api, api-2…, worker-1…, indexer, chain). */
export async function stopAllStale(dataDir: string, log: (line: string) => void): Promise<void> {
  for (const file of await readdir(path.join(dataDir, "run")).catch(() => [] as string[])) {
    if (!file.endsWith(".pid")) continue;
    const name = file.slice(0, -4);
    const pid = Number((await readFile(path.join(dataDir, "run", file), "utf8").catch(() => "")).trim());
    if (pid > 0 && alive(pid)) {
      log(`stopping ${name} left running by an earlier start (pid ${pid})`);
      if (!(await signalAndWait(pid, "SIGTERM", 5_000))) process.kill(pid, "SIGKILL");
    }
    await rm(path.join(dataDir, "run", file), { force: true });
  }
}
