/**
 * Global fixture of the stack tests: one real stack (embedded Postgres, anvil, Ponder, API) started once from a
 * fresh data directory on free ports, stopped at the end. Tests that restart parts of it go through `current()`,
 * which always returns the live stack.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { startStack, type Stack } from "../../../scripts/stack/stack.ts";
import { freePort } from "../../../scripts/stack/ports.ts";

let stack: Stack | undefined;
let dataDir: string | undefined;
let stackEnv: NodeJS.ProcessEnv | undefined;

export function current(): Stack {
  if (!stack) throw new Error("the stack is not running");
  return stack;
}

/** Environment the stack was started with (DATA_DIR and ports), to start it again identically. */
export function environment(): NodeJS.ProcessEnv {
  return { ...stackEnv };
}

export async function startFixtureStack(): Promise<Stack> {
  dataDir ??= await mkdtemp(path.join(os.tmpdir(), "licence-stack-"));
  stackEnv ??= {
    NODE_ENV: "test",
    // The fixture signs applicants in through the development identity provider: enabled explicitly.
    DEV_CONVENIENCES: "true",
    DATA_DIR: dataDir,
    // One API process (npm start's default is one per core): tests that kill or restart "the API" mean this one.
    API_PROCESSES: "1",
    PORT: String(await freePort()),
    CHAIN_PORT: String(await freePort()),
    EMBEDDED_PG_PORT: String(await freePort()),
    INDEXER_PORT: String(await freePort()),
    // Jobs: the webhook retry schedule (1 min … 24 h) runs 20,000 times faster, about 5 s in all.
    JOB_TIME_SCALE: "0.00005",
    JOB_POLL_MS: "100",
    JOB_LOCK_MS: "15000",
    // A department wallet change waits this long in public before it can take effect (at least 24 h on Besu).
    WALLET_DELAY_SECONDS: "4",
    // Rate limits are tested on their own API processes (rateLimits.test.ts); here they would only add noise.
    RATE_LIMIT_AUTH_PER_MINUTE: "0",
    RATE_LIMIT_WRITE_PER_MINUTE: "0",
    RATE_LIMIT_READ_PER_MINUTE: "0",
    RATE_LIMIT_PUBLIC_PER_MINUTE: "0",
    // Tests create many requests per applicant; the quota is tested on its own API process (security.test.ts).
    REQUEST_QUOTA_PER_DAY: "0",
    LOG_LEVEL: process.env.LOG_LEVEL ?? "info",
    DATABASE_URL: "",
    CHAIN_RPC_URL: "",
  };
  stack = await startStack({
    env: stackEnv,
    log: () => {},
    echo: process.env.STACK_ECHO === "true",
    // Snapshots only when a test (or a clean stop) takes one, so an unclean kill loses exactly what a test sent.
    chainSnapshotMs: 60_000,
  });
  return stack;
}

export async function stopFixtureStack(): Promise<void> {
  await stack?.stop();
  stack = undefined;
}

export async function mochaGlobalSetup(): Promise<void> {
  const started = Date.now();
  await startFixtureStack();
  console.log(
    `  (stack started in ${((Date.now() - started) / 1000).toFixed(1)} s: ${current().api.url}, data ${dataDir})`,
  );
}

export async function mochaGlobalTeardown(): Promise<void> {
  await stopFixtureStack();
  if (dataDir && process.env.KEEP_STACK_DATA !== "true") await rm(dataDir, { recursive: true, force: true });
}
