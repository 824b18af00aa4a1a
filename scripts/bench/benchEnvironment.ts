/**
 * The benchmark's own stack (fresh data directory, free ports, no rate limits) in one of two chain modes, and what
 * every measurement needs: HTTP helpers, an administrator and an applicant token, core services (the operator's
 * signer, the pool), the stack's processes for CPU accounting, and percentiles.
 *   - automine: the embedded default (anvil started by the stack, a block per transaction);
 *   - interval1s: an external chain the way a Besu QBFT network runs: anvil started here with 1 s blocks and free
 *     gas (base fee 0, gas price 0), the contracts deployed by scripts/deploy.ts as on Besu, and the stack pointed at
 *     it by CHAIN_RPC_URL, CHAIN_ID, CHAIN_GAS_MODE=free, DEPLOYMENT_FILE and the wallets' keys.
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import autocannon from "autocannon";
import { Wallet } from "ethers";
import { loadConfig, type Config } from "../../api/src/config.ts";
import { createLogger } from "../../api/src/observability/logger.ts";
import { createCoreServices, type CoreServices } from "../../api/src/services.ts";
import { anvilBinary, rpc } from "../stack/localChain.ts";
import { freePort } from "../stack/ports.ts";
import { REPO_ROOT, startStack, type Stack } from "../stack/stack.ts";
import type { NamedProcess, StackCpuMeter } from "./processCpu.ts";

const run = promisify(execFile);

export type Json = Record<string, any>;
export type ChainMode = "automine" | "interval1s";

/** The block period of the interval mode (seconds). */
export const BLOCK_PERIOD_S = 1;
/** The API logs this (warn) when a write returns before the index reached its block (read-your-writes timeout). */
const READ_YOUR_WRITES_TIMEOUT_LOG = "indexer did not reach the block in time";

export interface BenchEnvironment {
  mode: ChainMode;
  stack: Stack;
  config: Config;
  core: CoreServices;
  api: string;
  adminToken: string;
  applicantToken: string;
  applicantId: string;
  /** CPU of the stack's processes (API processes, workers, Ponder, Postgres by client, the chain). */
  meter: StackCpuMeter;
  request(
    method: string,
    route: string,
    token: string | undefined,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<{ status: number; body: Json }>;
  /** How many writes so far returned before the index reached their block (from the API processes' logs). */
  readYourWritesTimeouts(): Promise<number>;
  close(): Promise<void>;
}

/** anvil with 1 s blocks and free gas, the contracts deployed by the deploy script: the stack's external chain. */
async function startIntervalChain(dir: string): Promise<{ env: NodeJS.ProcessEnv; chain: ChildProcess }> {
  const port = await freePort();
  const rpcUrl = `http://127.0.0.1:${port}`;
  const chainId = "1337";
  const chain = await spawnIntervalAnvil(rpcUrl, port, chainId);
  const operator = Wallet.createRandom();
  const admin = Wallet.createRandom();
  // Governance holds a key of its own here, as a single-key network does (a Safe would answer 202 instead).
  const governance = Wallet.createRandom();
  const deploymentFile = path.join(dir, "deployment-interval.json");
  try {
    await deployContracts({
      CHAIN_RPC_URL: rpcUrl,
      DEPLOYMENT_FILE: deploymentFile,
      IGNITION_DIR: path.join(dir, "ignition"),
      DEPLOYMENT_ID: "bench-interval",
      OPERATOR_ADDRESS: operator.address,
      ADMIN_ADDRESS: admin.address,
      KEEPER_ADDRESS: operator.address,
      GOVERNANCE_ADDRESS: governance.address,
    });
  } catch (error) {
    chain.kill("SIGKILL");
    throw error;
  }
  return {
    chain,
    env: {
      CHAIN_RPC_URL: rpcUrl,
      CHAIN_ID: chainId,
      CHAIN_GAS_MODE: "free",
      DEPLOYMENT_FILE: deploymentFile,
      OPERATOR_PRIVATE_KEY: operator.privateKey,
      ADMIN_WALLET_PRIVATE_KEY: admin.privateKey,
      GOVERNANCE_PRIVATE_KEY: governance.privateKey,
      MASTER_KEY: `0x${randomBytes(32).toString("hex")}`,
    },
  };
}

/** anvil on `port` with BLOCK_PERIOD_S blocks, base fee and gas price 0 (a Besu QBFT shape), once it answers. */
async function spawnIntervalAnvil(rpcUrl: string, port: number, chainId: string): Promise<ChildProcess> {
  const chain = spawn(
    anvilBinary(),
    [
      "--host",
      "127.0.0.1",
      "--port",
      String(port),
      "--chain-id",
      chainId,
      "--hardfork",
      "london",
      "--block-time",
      String(BLOCK_PERIOD_S),
      "--base-fee",
      "0",
      "--gas-price",
      "0",
      "--silent",
    ],
    { stdio: "ignore" },
  );
  for (let i = 0; !(await rpc(rpcUrl, "eth_chainId", []).then(Boolean, () => false)); i++) {
    if (i > 300 || chain.exitCode !== null) throw new Error("the interval chain (anvil --block-time) did not start");
    await new Promise((r) => setTimeout(r, 50));
  }
  return chain;
}

/** scripts/deploy.ts against the external chain, as an operator deploys to Besu (`env` names chain, file, wallets). */
async function deployContracts(env: NodeJS.ProcessEnv): Promise<void> {
  await run(
    process.execPath,
    [
      path.join(REPO_ROOT, "node_modules", "hardhat", "dist", "src", "cli.js"),
      "run",
      "--no-compile",
      "scripts/deploy.ts",
      "--network",
      "localhost",
    ],
    { cwd: REPO_ROOT, env: { ...process.env, ...env }, maxBuffer: 16 * 1024 * 1024 },
  );
}

/** The stack's processes by name, read from the pid files it keeps under DATA_DIR/run (and the external chain's). */
async function stackProcesses(dataDir: string, externalChain?: ChildProcess): Promise<NamedProcess[]> {
  const names = (await readdir(path.join(dataDir, "run")).catch(() => [] as string[])).filter((f) =>
    f.endsWith(".pid"),
  );
  const found: NamedProcess[] = [];
  for (const file of names) {
    const pid = Number((await readFile(path.join(dataDir, "run", file), "utf8")).trim());
    const name = file.slice(0, -4);
    if (pid > 0)
      found.push({ name: name === "indexer" ? "indexer (Ponder)" : name === "chain" ? "chain (anvil)" : name, pid });
  }
  if (externalChain?.pid) found.push({ name: "chain (anvil, external)", pid: externalChain.pid });
  return found;
}

export async function startBenchEnvironment(mode: ChainMode = "automine"): Promise<BenchEnvironment> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), "bench-"));
  const external = mode === "interval1s" ? await startIntervalChain(dataDir) : undefined;
  const stack = await startBenchStack(dataDir, external);
  const config = loadConfig(stack.env);
  const core = await createCoreServices(config, createLogger("silent"));
  const postgresPid =
    Number(
      (await readFile(path.join(config.dataDir, "postgres", "postmaster.pid"), "utf8").catch(() => "")).split("\n")[0],
    ) || undefined;
  let processes = await stackProcesses(config.dataDir, external?.chain);
  const meter: StackCpuMeter = {
    named: () => processes,
    postgresPid,
    head: async () => Number(await rpc<string>(stack.rpcUrl, "eth_blockNumber", [])),
  };
  const api = `${stack.api.url}/api/v1`;
  const request = jsonRequester(api);
  const adminToken = await adminSignIn(api, stack.admin);
  const applicantId = "bench-applicant";
  const applicantToken = await developmentSignIn(api, applicantId, "Ben Chmark");
  const logs = path.join(config.dataDir, "logs");
  return {
    mode,
    stack,
    config,
    core,
    api,
    adminToken,
    applicantToken,
    applicantId,
    request,
    meter,
    async readYourWritesTimeouts() {
      // The pid files again: a process the supervisor restarted is measured under its new pid from now on.
      processes = await stackProcesses(config.dataDir, external?.chain);
      let count = 0;
      for (const file of await readdir(logs).catch(() => [] as string[])) {
        if (!/^(api|worker)/.test(file)) continue;
        count += (await readFile(path.join(logs, file), "utf8")).split(READ_YOUR_WRITES_TIMEOUT_LOG).length - 1;
      }
      return count;
    },
    async close() {
      await core.close();
      await stack.stop();
      if (external && external.chain.exitCode === null) {
        const exited = new Promise((r) => external.chain.once("exit", r));
        external.chain.kill("SIGTERM");
        await exited;
      }
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** The stack on a fresh data directory (pointed at the external chain when there is one, which a failure stops). */
async function startBenchStack(
  dataDir: string,
  external: { env: NodeJS.ProcessEnv; chain: ChildProcess } | undefined,
): Promise<Stack> {
  const env = {
    ...(await benchStackEnv(path.join(dataDir, "data"))),
    ...external?.env,
  };
  try {
    // Snapshots of a chain with 100k+ transactions are large: only at the clean stop.
    return await startStack({ env, log: () => {}, chainSnapshotMs: 3_600_000 });
  } catch (error) {
    external?.chain.kill("SIGKILL");
    throw error;
  }
}

/**
 * The environment of a stack started for a benchmark: fresh free ports, embedded Postgres and chain, quiet logs,
 * and no rate limits or quotas (they would measure the limiter, not the platform).
 */
export async function benchStackEnv(dataDir: string): Promise<Record<string, string>> {
  const limits = ["RATE_LIMIT_AUTH_PER_MINUTE", "RATE_LIMIT_WRITE_PER_MINUTE", "RATE_LIMIT_READ_PER_MINUTE"];
  return {
    DATA_DIR: dataDir,
    PORT: String(await freePort()),
    CHAIN_PORT: String(await freePort()),
    EMBEDDED_PG_PORT: String(await freePort()),
    INDEXER_PORT: String(await freePort()),
    LOG_LEVEL: "warn",
    DATABASE_URL: "",
    CHAIN_RPC_URL: "",
    ...Object.fromEntries([...limits, "RATE_LIMIT_PUBLIC_PER_MINUTE", "REQUEST_QUOTA_PER_DAY"].map((k) => [k, "0"])),
  };
}

async function tokenFrom(response: Response, who: string): Promise<string> {
  const body = (await response.json()) as { access_token?: string };
  if (!body.access_token) throw new Error(`the sign-in of ${who} failed: ${JSON.stringify(body)}`);
  return body.access_token;
}

/** The administrator's token: the client_credentials grant with the admin client `npm start` prints. */
export async function adminSignIn(apiBase: string, admin: { clientId: string; clientSecret: string }): Promise<string> {
  const body = new URLSearchParams({
    grant_type: "client_credentials",
    client_id: admin.clientId,
    client_secret: admin.clientSecret,
    scope: "admin",
  });
  return tokenFrom(await fetch(`${apiBase}/auth/token`, { method: "POST", body }), "the admin client");
}

/**
 * An applicant's token from the development identity provider, as a browser gets it: authorize with a PKCE S256
 * challenge (`login_hint` names the applicant), then exchange the code with its verifier (RFC 7636's example pair).
 */
export async function developmentSignIn(apiBase: string, applicantId: string, name?: string): Promise<string> {
  const [client_id, redirect_uri] = ["demo", "http://127.0.0.1:9/cb"];
  const query = new URLSearchParams({
    client_id,
    code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
    code_challenge_method: "S256",
    redirect_uri,
    state: "s",
    login_hint: applicantId,
    ...(name ? { name } : {}),
  });
  const login = await fetch(`${apiBase}/auth/identitylocker/authorize?${query}`, { redirect: "manual" });
  const code = new URL(login.headers.get("location")!).searchParams.get("code");
  const code_verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
  const exchange = await fetch(`${apiBase}/auth/identitylocker/token`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ code, client_id, code_verifier, redirect_uri }),
  });
  return tokenFrom(exchange, applicantId);
}

/** JSON requests to the API, with a bearer token when given. */
function jsonRequester(api: string): BenchEnvironment["request"] {
  return async (method, route, token, body, headers = {}) => {
    const response = await fetch(`${api}${route}`, {
      method,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body !== undefined ? { "content-type": "application/json" } : {}),
        ...headers,
      },
      body: body !== undefined ? JSON.stringify(body) : undefined,
    });
    const text = await response.text();
    return { status: response.status, body: text ? (JSON.parse(text) as Json) : {} };
  };
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/** Runs `task` `total` times with `concurrency` workers; returns the wall time in ms. */
export async function runConcurrently(
  total: number,
  concurrency: number,
  task: (i: number) => Promise<void>,
): Promise<number> {
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < total) await task(next++);
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return performance.now() - started;
}

/**
 * HTTP load from autocannon (`amount` requests or `duration` seconds from `connections` clients); the latencies of
 * the answers with status `ok`, and the others' statuses.
 */
export function load(
  ok: number,
  options: autocannon.Options,
): Promise<{ result: autocannon.Result; latencies: number[]; failures: number[] }> {
  const latencies: number[] = [];
  const failures: number[] = [];
  return new Promise((resolve, reject) => {
    const instance = autocannon({ timeout: 120, ...options }, (error, result) =>
      error ? reject(error) : resolve({ result, latencies, failures }),
    );
    instance.on("response", (_client, status, _bytes, ms) => (status === ok ? latencies : failures).push(ms));
  });
}

export const say = (line: string) => console.log(`  ${line}`);

/** A JSON-RPC batch straight to the node (each answer's error is the caller's). */
export async function rpcBatch(url: string, calls: { method: string; params: unknown[] }[]): Promise<any[]> {
  const body = calls.map((call, id) => ({ jsonrpc: "2.0", id, ...call }));
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return (await response.json()) as any[];
}

/** Reserves `count` token ids from the API's sequence (for tokens minted behind its back); returns the first. */
export async function reserveTokenIds(env: BenchEnvironment, count: number): Promise<bigint> {
  const { rows } = await env.core.pool.query(
    `SELECT setval('token_ids', nextval('token_ids') + $1) - $1 + 1 AS first`,
    [count],
  );
  return BigInt(rows[0].first);
}
