/**
 * `npm run worker` itself (the npm script, as the README has it) next to a running stack: given only DATA_DIR it
 * joins that stack and runs its jobs; with no stack there it says so.
 */
import { randomUUID } from "node:crypto";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import pg from "pg";
import { enqueueJob, JOB_NAMES } from "../../api/src/jobs/jobQueue.ts";
import { eventually } from "./support/eventually.ts";
import { npmRun, terminalEnv } from "./support/npmScript.ts";
import { current } from "./support/stackFixture.ts";

describe("npm run worker (the npm script) next to npm start", function () {
  it("joins the stack found by DATA_DIR alone and runs its jobs (the API runs none), then stops on SIGTERM", async function () {
    const stack = current();
    await stack.restartApi("clean", { JOBS_IN_API: "false" });
    const worker = npmRun(
      "worker",
      terminalEnv({ DATA_DIR: stack.config.dataDir, JOB_POLL_MS: "100", LOG_LEVEL: "info", NODE_ENV: "test" }),
    );
    const pool = new pg.Pool({
      connectionString: stack.databaseUrl,
      options: `-c search_path=${stack.config.apiSchema},public`,
    });
    try {
      await eventually(
        "the worker's job runner started",
        async () => {
          if (worker.child.exitCode !== null) throw new Error(`worker exited:\n${worker.output()}`);
          return /job runner started/.test(worker.output()) ? true : undefined;
        },
        60_000,
      );
      expect(worker.output()).to.not.include("CHAIN_ID is required");
      // A job only a runner removes (removeOnComplete): with JOBS_IN_API=false, only the worker can run it.
      const key = randomUUID();
      await enqueueJob(pool, JOB_NAMES.discardFiles, key, { txId: randomUUID() });
      await eventually(
        "the job run by the worker",
        async () => {
          const { rowCount } = await pool.query(`SELECT 1 FROM agenda_jobs WHERE name = $1 AND job_key = $2`, [
            JOB_NAMES.discardFiles,
            key,
          ]);
          return rowCount === 0 ? true : undefined;
        },
        20_000,
      );
      // SIGTERM to npm's process group, as a service manager stops it: the worker stops as told.
      process.kill(-worker.child.pid!, "SIGTERM");
      await worker.exited;
      await eventually(
        "the worker stopping",
        async () => (/stopping worker/.test(worker.output()) ? true : undefined),
        10_000,
      );
    } finally {
      if (worker.child.exitCode === null) process.kill(-worker.child.pid!, "SIGKILL");
      await pool.end();
      await stack.restartApi("clean");
    }
  });

  it("says clearly that no platform runs on its DATA_DIR, instead of a configuration error", async function () {
    const empty = await mkdtemp(path.join(os.tmpdir(), "worker-nostack-"));
    try {
      const worker = npmRun("worker", terminalEnv({ DATA_DIR: empty }));
      expect(await worker.exited).to.equal(1);
      expect(worker.output()).to.include(`No platform is running on ${empty}`);
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
  });
  it("refuses to start without the secrets the API needs (no DEV_CONVENIENCES), in production or not, and generates none", async function () {
    const stack = current();
    for (const nodeEnv of ["production", "test"]) {
      const dataDir = await mkdtemp(path.join(os.tmpdir(), "worker-secrets-"));
      try {
        // Real services given (so it looks for no stack), but none of the secrets.
        const worker = npmRun(
          "worker",
          terminalEnv({
            DATA_DIR: dataDir,
            NODE_ENV: nodeEnv,
            PUBLIC_BASE_URL: "https://licences.example.org",
            DATABASE_URL: stack.databaseUrl,
            CHAIN_RPC_URL: stack.rpcUrl,
            CHAIN_ID: String(stack.config.chainId),
            DEPLOYMENT_FILE: stack.config.deploymentFile!,
          }),
        );
        expect(await worker.exited, worker.output()).to.equal(1);
        expect(worker.output()).to.match(
          nodeEnv === "production"
            ? /MASTER_KEY is required in production/
            : /MASTER_KEY is required \(or DEV_CONVENIENCES=true/,
        );
        expect(worker.output()).to.match(/JWT_PRIVATE_KEY is required|CUSTODY_SECRET is required/);
        expect(worker.output()).to.not.match(/job runner started/);
        expect(await readdir(dataDir)).to.deep.equal([]);
      } finally {
        await rm(dataDir, { recursive: true, force: true });
      }
    }
  });
});
