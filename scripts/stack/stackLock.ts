/**
 * One stack per data directory: DATA_DIR/run/stack.json names the supervisor holding it (pid) and what other
 * processes need to join it (URL, ports, chain id). A second start finds it and stops before touching anything;
 * `npm run worker` reads it to find the running stack.
 */
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

/** Taken with pid, url, dataDir and chainId; the rest is recorded before the first API process starts. */
export interface StackDescriptor {
  pid: number;
  /** The API's URL, as the ready block prints it (known once the API listens). */
  url: string;
  dataDir: string;
  chainId: number;
  embeddedPostgresPort?: number;
  /** The settings a worker joins with (chain, deployment, indexer, token issuer, API schema, DEV_CONVENIENCES). */
  env?: Record<string, string | undefined>;
}

export class StackAlreadyRunning extends Error {
  constructor(running: StackDescriptor) {
    super(
      `The licence approval platform is already running at ${running.url} (supervisor pid ${running.pid}, data ${running.dataDir}). Stop it first (Ctrl-C in its terminal), or start another one with its own DATA_DIR and ports.`,
    );
  }
}

const fileOf = (dataDir: string) => path.join(dataDir, "run", "stack.json");

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
};

/** The stack running on this data directory, if its supervisor is alive. Reads only. */
export async function runningStack(dataDir: string): Promise<StackDescriptor | undefined> {
  const descriptor = await readDescriptor(fileOf(dataDir));
  return descriptor && descriptor.pid > 0 && descriptor.pid !== process.pid && alive(descriptor.pid)
    ? descriptor
    : undefined;
}

const readDescriptor = (file: string): Promise<StackDescriptor | undefined> =>
  readFile(file, "utf8")
    .then(JSON.parse)
    .catch(() => undefined);

/**
 * The stack on this data directory once it can be joined (its parts recorded; it may still be starting its APIs):
 * waits (up to `timeoutMs`) while it is still starting. Undefined when none runs, or when it stopped while starting;
 * `waiting` is called once if it has to wait.
 */
export async function stackToJoin(
  dataDir: string,
  options: { timeoutMs: number; waiting?: (stack: StackDescriptor) => void },
): Promise<StackDescriptor | undefined> {
  const deadline = Date.now() + options.timeoutMs;
  const joinable = (stack: StackDescriptor) => stack.env !== undefined;
  let stack = await runningStack(dataDir);
  if (stack && !joinable(stack)) options.waiting?.(stack);
  for (; stack && !joinable(stack); stack = await runningStack(dataDir)) {
    if (Date.now() > deadline)
      throw new Error(
        `The platform on ${dataDir} (supervisor pid ${stack.pid}) has not finished starting after ${Math.round(options.timeoutMs / 1000)} s`,
      );
    await sleep(200);
  }
  return stack;
}

/**
 * Takes the data directory for this process, or throws StackAlreadyRunning without changing anything. The file is
 * created exclusively, so of two starts racing only one wins; a file left by a dead supervisor is replaced.
 */
export async function lockStack(
  descriptor: StackDescriptor,
): Promise<{ update(patch: Partial<StackDescriptor>): Promise<void>; release(): Promise<void> }> {
  const running = await runningStack(descriptor.dataDir);
  if (running) throw new StackAlreadyRunning(running);
  const file = fileOf(descriptor.dataDir);
  await mkdir(path.dirname(file), { recursive: true });
  await rm(file, { force: true }); // stale: its supervisor is gone
  let current = descriptor;
  await writeFile(file, JSON.stringify(current, null, 2), { flag: "wx" }).catch(
    async (error: NodeJS.ErrnoException) => {
      if (error.code === "EEXIST")
        throw new StackAlreadyRunning((await runningStack(descriptor.dataDir)) ?? descriptor);
      throw error;
    },
  );
  return {
    async update(patch) {
      current = { ...current, ...patch };
      await writeFile(file, JSON.stringify(current, null, 2));
    },
    async release() {
      if ((await readDescriptor(file))?.pid === process.pid) await rm(file, { force: true });
    },
  };
}
