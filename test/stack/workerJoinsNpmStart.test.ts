/**
 * `npm run worker` beside `npm start` on moved ports, as the README has it: the same environment (DATA_DIR and the
 * ports), started the moment /health answers, joins the stack by DATA_DIR alone. The stack starts its own (this
 * test needs no fixture), with two API processes: /health answers once the first listens, while the second is
 * still starting.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { freePort } from "../../scripts/stack/ports.ts";
import { npmRun, terminalEnv } from "./support/npmScript.ts";

/** Polls `done` every 50 ms until it is true; an error it throws fails at once. */
async function until(what: string, timeoutMs: number, done: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("npm run worker beside npm start on moved ports", function () {
  this.timeout(300_000);

  it("joins by DATA_DIR alone right after /health answers 200 and starts its job runner; stops on SIGTERM", async function () {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), "worker-moved-ports-"));
    const port = await freePort();
    const env = terminalEnv({
      DATA_DIR: dataDir,
      PORT: String(port),
      CHAIN_PORT: String(await freePort()),
      EMBEDDED_PG_PORT: String(await freePort()),
      INDEXER_PORT: String(await freePort()),
      API_PROCESSES: "2",
    });
    const stack = npmRun("start", env);
    let worker: ReturnType<typeof npmRun> | undefined;
    try {
      await until("the stack's /health answering 200", 240_000, async () => {
        if (stack.child.exitCode !== null) throw new Error(`npm start exited:\n${stack.output()}`);
        const health = await fetch(`http://127.0.0.1:${port}/health`).catch(() => undefined);
        return health?.status === 200;
      });
      // At once, in the same environment.
      const running = (worker = npmRun("worker", { ...env, LOG_LEVEL: "info" }));
      await until("the worker's job runner started", 120_000, async () => {
        if (running.child.exitCode !== null) throw new Error(`worker exited:\n${running.output()}`);
        return /job runner started/.test(running.output());
      });
      expect(worker.output()).to.not.include("is not set");
      process.kill(-worker.child.pid!, "SIGTERM");
      await worker.exited;
      expect(worker.output()).to.match(/stopping worker/);
    } finally {
      worker?.signal("SIGKILL");
      stack.signal("SIGINT");
      const stopped = await Promise.race([
        stack.exited,
        new Promise((resolve) => setTimeout(() => resolve("timeout"), 60_000)),
      ]);
      if (stopped === "timeout") stack.signal("SIGKILL");
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
