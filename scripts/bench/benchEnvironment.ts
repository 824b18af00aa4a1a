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
import { loadConfig } from "../../api/src/config.ts";
import { developmentSecret } from "../../api/src/developmentSecrets.ts";
import { createLogger } from "../../api/src/observability/logger.ts";
import { createCoreServices } from "../../api/src/services.ts";
import { anvilBinary, rpc } from "../stack/localChain.ts";
import { freePort } from "../stack/ports.ts";
import { REPO_ROOT, startStack } from "../stack/stack.ts";
import type { NamedProcess, StackCpuMeter } from "./processCpu.ts";

export type Json = Record<string, any>;
export type ChainMode = "automine" | "interval1s";
export type BenchEnvironment = Awaited<ReturnType<typeof startBenchEnvironment>>;

/** The block period of the interval mode (seconds). */
export const BLOCK_PERIOD_S = 1;
/** The API logs this (warn) when a write returns before the index reached its block (read-your-writes timeout). */
const READ_YOUR_WRITES_TIMEOUT_LOG = "indexer did not reach the block in time";

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export const say = (line: string) => console.log(`  ${line}`);

/** anvil with 1 s blocks and free gas, the contracts deployed by the deploy script: the stack's external chain. */
async function startIntervalChain(dir: string): Promise<{ env: NodeJS.ProcessEnv; chain: ChildProcess }> {
  const port = await freePort();
  const [rpcUrl, chainId] = [`http://127.0.0.1:${port}`, "1337"];
  const args = `--host 127.0.0.1 --port ${port} --chain-id ${chainId} --hardfork london --block-time ${BLOCK_PERIOD_S} --base-fee 0 --gas-price 0 --silent`;
  const chain = spawn(anvilBinary(), args.split(" "), { stdio: "ignore" });
  // Governance holds a key of its own here, as a single-key network does (a Safe would answer 202 instead).
  const [operator, admin, governance] = [Wallet.createRandom(), Wallet.createRandom(), Wallet.createRandom()];
  const deploymentFile = path.join(dir, "deployment-interval.json");
  try {
    for (let i = 0; !(await rpc(rpcUrl, "eth_chainId", []).then(Boolean, () => false)); i++) {
      if (i > 300 || chain.exitCode !== null) throw new Error("the interval chain (anvil --block-time) did not start");
      await sleep(50);
    }
    // scripts/deploy.ts against the external chain, as an operator deploys to Besu.
    const deployEnv = {
      CHAIN_RPC_URL: rpcUrl,
      DEPLOYMENT_FILE: deploymentFile,
      IGNITION_DIR: path.join(dir, "ignition"),
      DEPLOYMENT_ID: "bench-interval",
      OPERATOR_ADDRESS: operator.address,
      ADMIN_ADDRESS: admin.address,
      KEEPER_ADDRESS: operator.address,
      GOVERNANCE_ADDRESS: governance.address,
    };
    const hardhat = path.join(REPO_ROOT, "node_modules", "hardhat", "dist", "src", "cli.js");
    await promisify(execFile)(
      process.execPath,
      [hardhat, "run", "--no-compile", "scripts/deploy.ts", "--network", "localhost"],
      { cwd: REPO_ROOT, env: { ...process.env, ...deployEnv }, maxBuffer: 16 * 1024 * 1024 },
    );
  } catch (error) {
    chain.kill("SIGKILL");
    throw error;
  }
  const env = {
    CHAIN_RPC_URL: rpcUrl,
    CHAIN_ID: chainId,
    CHAIN_GAS_MODE: "free",
    DEPLOYMENT_FILE: deploymentFile,
    OPERATOR_PRIVATE_KEY: operator.privateKey,
    ADMIN_WALLET_PRIVATE_KEY: admin.privateKey,
    GOVERNANCE_PRIVATE_KEY: governance.privateKey,
    MASTER_KEY: `0x${randomBytes(32).toString("hex")}`,
  };
  return { chain, env };
}

/** The stack's processes by name, read from the pid files it keeps under DATA_DIR/run (and the external chain's). */
async function stackProcesses(dataDir: string, externalChain?: ChildProcess): Promise<NamedProcess[]> {
  const runDir = path.join(dataDir, "run");
  const found: NamedProcess[] = [];
  for (const file of (await readdir(runDir).catch(() => [] as string[])).filter((f) => f.endsWith(".pid"))) {
    const pid = Number((await readFile(path.join(runDir, file), "utf8")).trim());
    const name = file.slice(0, -4);
    if (pid > 0)
      found.push({ name: name === "indexer" ? "indexer (Ponder)" : name === "chain" ? "chain (anvil)" : name, pid });
  }
  if (externalChain?.pid) found.push({ name: "chain (anvil, external)", pid: externalChain.pid });
  return found;
}

export async function startBenchEnvironment(mode: ChainMode = "automine") {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), "bench-"));
  const external = mode === "interval1s" ? await startIntervalChain(dataDir) : undefined;
  // Fresh free ports, embedded Postgres and chain, quiet logs, and no rate limits or quotas (they would measure the
  // limiter, not the platform).
  const limits = ["AUTH", "WRITE", "READ", "PUBLIC"].map((k) => `RATE_LIMIT_${k}_PER_MINUTE`);
  const ports: Record<string, string> = {};
  for (const k of ["PORT", "CHAIN_PORT", "EMBEDDED_PG_PORT", "INDEXER_PORT"]) ports[k] = String(await freePort());
  const stackEnv = {
    DATA_DIR: path.join(dataDir, "data"),
    ...ports,
    LOG_LEVEL: "warn",
    DATABASE_URL: "",
    CHAIN_RPC_URL: "",
    ...Object.fromEntries([...limits, "REQUEST_QUOTA_PER_DAY"].map((k) => [k, "0"])),
    ...external?.env,
  };
  // Snapshots of a chain with 100k+ transactions are large: only at the clean stop.
  const stack = await startStack({ env: stackEnv, log: () => {}, chainSnapshotMs: 3_600_000 }).catch((error) => {
    external?.chain.kill("SIGKILL");
    throw error;
  });
  const config = loadConfig(stack.env);
  const core = await createCoreServices(config, createLogger("silent"));
  const postmaster = await readFile(path.join(config.dataDir, "postgres", "postmaster.pid"), "utf8").catch(() => "");
  let processes = await stackProcesses(config.dataDir, external?.chain);
  const meter: StackCpuMeter = {
    named: () => processes,
    postgresPid: Number(postmaster.split("\n")[0]) || undefined,
    head: async () => Number(await rpc<string>(stack.rpcUrl, "eth_blockNumber", [])),
  };
  const api = `${stack.api.url}/api/v1`;
  const applicantId = "bench-applicant";
  const logs = path.join(config.dataDir, "logs");
  return {
    mode,
    stack,
    config,
    core,
    api,
    adminToken: await adminSignIn(api, stack.admin),
    applicantToken: await developmentSignIn(api, applicantId, "Ben Chmark"),
    applicantId,
    custody: config.custodySecret ?? (await developmentSecret(config.dataDir, "custody.key")),
    /** CPU of the stack's processes (API processes, workers, Ponder, Postgres by client, the chain). */
    meter,
    request: jsonRequester(api),
    /** How many writes so far returned before the index reached their block (from the API processes' logs). */
    async readYourWritesTimeouts() {
      // The pid files again: a process the supervisor restarted is measured under its new pid from now on.
      processes = await stackProcesses(config.dataDir, external?.chain);
      let count = 0;
      for (const file of (await readdir(logs).catch(() => [] as string[])).filter((f) => /^(api|worker)/.test(f)))
        count += (await readFile(path.join(logs, file), "utf8")).split(READ_YOUR_WRITES_TIMEOUT_LOG).length - 1;
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

async function tokenFrom(response: Response, who: string): Promise<string> {
  const body = (await response.json()) as { access_token?: string };
  if (!body.access_token) throw new Error(`the sign-in of ${who} failed: ${JSON.stringify(body)}`);
  return body.access_token;
}

/** The administrator's token: the client_credentials grant with the admin client `npm start` prints. */
async function adminSignIn(apiBase: string, admin: { clientId: string; clientSecret: string }): Promise<string> {
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
async function developmentSignIn(apiBase: string, applicantId: string, name: string): Promise<string> {
  const [client_id, redirect_uri] = ["demo", "http://127.0.0.1:9/cb"];
  const query = new URLSearchParams({
    client_id,
    code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
    code_challenge_method: "S256",
    redirect_uri,
    state: "s",
    login_hint: applicantId,
    name,
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
function jsonRequester(api: string) {
  return async (
    method: string,
    route: string,
    token?: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ) => {
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

/** "p50 / p95" of `values`, whole milliseconds. */
export const p50p95 = (values: number[]) =>
  `${percentile(values, 50).toFixed(0)} / ${percentile(values, 95).toFixed(0)}`;

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
 * the answers with status `ok` (kept whole: autocannon's own histogram has no p95 and rounds to milliseconds), and
 * the others' statuses.
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

/** A JSON-RPC batch straight to the node (each answer's error is the caller's). */
export async function rpcBatch(url: string, calls: { method: string; params: unknown[] }[]): Promise<any[]> {
  const body = JSON.stringify(calls.map((call, id) => ({ jsonrpc: "2.0", id, ...call })));
  const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body });
  return (await response.json()) as any[];
}

/** Reserves `count` token ids from the API's sequence (for tokens minted behind its back); returns the first. */
export async function reserveTokenIds(env: BenchEnvironment, count: number): Promise<bigint> {
  const sql = `SELECT setval('token_ids', nextval('token_ids') + $1) - $1 + 1 AS first`;
  return BigInt((await env.core.pool.query(sql, [count])).rows[0].first);
}

/** Moves the operator's outbox nonce past what was sent behind the API's back. */
export async function resyncOperatorNonce(env: BenchEnvironment): Promise<void> {
  const pending = await env.core.provider.getTransactionCount(env.stack.operatorAddress, "pending");
  await env.core.pool.query(`UPDATE wallets SET next_nonce = GREATEST(next_nonce, $2) WHERE address = $1`, [
    env.stack.operatorAddress.toLowerCase(),
    pending,
  ]);
}
