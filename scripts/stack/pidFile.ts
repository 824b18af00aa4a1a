/**
 * Pid files under DATA_DIR/run: if a previous supervisor was killed (SIGKILL) its children survive it; the next
 * start stops them before reusing their ports and data.
 */
import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";

/** Whether a process with this id exists (signal 0 checks without signalling). */
export const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

export async function stopStale(dataDir: string, name: string, log: (line: string) => void): Promise<void> {
  const file = path.join(dataDir, "run", `${name}.pid`);
  const pid = Number((await readFile(file, "utf8").catch(() => "")).trim());
  if (pid > 0 && alive(pid)) {
    log(`stopping ${name} left running by an earlier start (pid ${pid})`);
    process.kill(pid, "SIGTERM");
    for (let i = 0; i < 100 && alive(pid); i++) await new Promise((r) => setTimeout(r, 50));
    if (alive(pid)) process.kill(pid, "SIGKILL");
  }
  await rm(file, { force: true });
}

/** Every child recorded under DATA_DIR/run (api, api-2…, worker-1…, indexer, chain). */
export async function stopAllStale(dataDir: string, log: (line: string) => void): Promise<void> {
  const names = (await readdir(path.join(dataDir, "run")).catch(() => [] as string[]))
    .filter((f) => f.endsWith(".pid"))
    .map((f) => f.slice(0, -4));
  for (const name of names) await stopStale(dataDir, name, log);
}

export async function writePid(dataDir: string, name: string, pid: number | undefined): Promise<void> {
  if (!pid) return;
  await mkdir(path.join(dataDir, "run"), { recursive: true });
  await writeFile(path.join(dataDir, "run", `${name}.pid`), `${pid}\n`);
}

export async function removePid(dataDir: string, name: string): Promise<void> {
  await rm(path.join(dataDir, "run", `${name}.pid`), { force: true });
}
