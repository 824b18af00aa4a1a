/**
 * The whole platform on one machine: Postgres (embedded unless DATABASE_URL), a chain (embedded anvil unless
 * CHAIN_RPC_URL), the contracts (deployed when the embedded chain has none), the Ponder indexer and the API.
 * Used by `npm start` and by the tests' global fixture.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import {
  DEVELOPMENT_CHAIN_ID,
  DEVELOPMENT_GOVERNANCE_KEY,
  assertConfiguredSecrets,
  devConveniencesProblems,
  loadConfig,
  type Config,
} from "../../api/src/config.ts";
import { KeyVault } from "../../api/src/chain/keyVault.ts";
import { WalletStore } from "../../api/src/chain/walletStore.ts";
import { loadDeployment, type Deployment } from "../../api/src/chain/deployment.ts";
import { migrate } from "../../api/src/db/migrate.ts";
import { createPool } from "../../api/src/db/pool.ts";
import { administratorWallet, createSigner, masterKeyOf, operatorWallet } from "../../api/src/services.ts";
import { developmentSecret } from "../../api/src/developmentSecrets.ts";
import { prepareApiRole } from "./apiDatabaseRole.ts";
import { startEmbeddedPostgres } from "./embeddedPostgres.ts";
import { startIndexer, type IndexerHandle } from "./indexerProcess.ts";
import { rpc, startLocalChain, type LocalChain } from "./localChain.ts";
import { spawnNode, type ManagedProcess } from "./managedProcess.ts";
import { stopAllStale } from "./pidFile.ts";
import { lockStack } from "./stackLock.ts";
import { assertPortFree, freePort } from "./ports.ts";
import { StopPlan } from "./stopPlan.ts";

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const run = promisify(execFile);

export interface StackOptions {
  /** Environment overrides on top of process.env (tests pass ports and DATA_DIR here). */
  env?: NodeJS.ProcessEnv;
  /** Copy child processes' output to stdout. */
  echo?: boolean;
  log?: (line: string) => void;
  /** Aborts start-up (Ctrl-C while starting): what was started is stopped, then startStack rejects. */
  signal?: AbortSignal;
  /** How often (ms) the embedded chain is checked for new blocks, saved when it has some; tests and the bench save less. */
  chainSnapshotMs?: number;
}

/** What `npm run worker` joins with (stack.json): the stack's DEV_CONVENIENCES finds the same generated secrets. */
const JOINED =
  "CHAIN_RPC_URL CHAIN_ID CHAIN_FUNDING DEPLOYMENT_FILE INDEXER_URL JWT_ISSUER API_DB_SCHEMA DEV_CONVENIENCES";

export type Stack = Awaited<ReturnType<typeof startStack>>;
export type ApiHandle = Awaited<ReturnType<typeof startApi>>;
export type BootstrapAdmin = Awaited<ReturnType<typeof bootstrapAdminClient>>;

export async function startStack(options: StackOptions = {}) {
  const log = options.log ?? ((line: string) => console.log(line));
  const env = stackEnvironment(options, log);
  const config = loadConfig(env);
  // One stack per data directory: a second start says where the first one runs and touches nothing.
  const lock = await lockStack({
    pid: process.pid,
    url: `http://${config.host}:${config.port}`,
    dataDir: config.dataDir,
    chainId: config.chainId,
  });
  const startup = newStartup(config, env, options, log, lock);
  try {
    // Children left running by a supervisor that was killed (its lock is gone with it) hold ports and data.
    await stopAllStale(config.dataDir, log);
    await assertStackPortsFree(config);
    // Before anything starts: without DEV_CONVENIENCES the operator must supply the admin client and every secret.
    assertConfiguredSecrets(config);
    const admin = await bootstrapAdminClient(config);
    const { step, checkpoint } = startup;
    step("starting Postgres (embedded; a first start creates its cluster, about 5 s)");
    const postgres = await startPostgres(startup);
    step("starting the local chain (anvil, about 1 s)");
    const chain = await startChain(startup);
    step("preparing the role wallets and the API's database");
    const roles = await roleWallets(startup, postgres.databaseUrl, chain);
    checkpoint();
    // Embedded Postgres: the API and workers connect as the API's own role, which owns the API's schema but not its
    // audit table (apiDatabaseRole.ts). An external DATABASE_URL is used as given: its roles are the operator's.
    const apiDatabaseUrl = postgres.embedded
      ? await prepareApiRole(postgres.databaseUrl, config)
      : postgres.databaseUrl;
    checkpoint();
    const deployment = await ensureDeployed(startup, chain, roles);
    step("starting the Ponder indexer (it builds its tables and catches up with the chain, 10 to 30 s)");
    const indexer = await startWatchedIndexer(startup, postgres.databaseUrl, chain);
    const apiEnv = apiEnvironment(startup, { databaseUrl: apiDatabaseUrl, chain, indexer: indexer.current(), admin });
    step(`starting ${config.apiProcesses} API process${config.apiProcesses === 1 ? "" : "es"} (about 5 s)`);
    // Recorded before any API answers: `npm run worker` started as soon as /health answers can join.
    const joined = Object.fromEntries(JOINED.split(" ").map((name) => [name, apiEnv[name]]));
    await lock.update({
      embeddedPostgresPort: postgres.embedded ? config.embeddedPostgresPort : undefined,
      env: joined,
    });
    const apis = await startApis(startup, apiEnv);
    await lock.update({ url: apis.all[0].url });
    await startWorkers(startup, apiEnv);
    return {
      config,
      env: apiEnv,
      databaseUrl: postgres.databaseUrl,
      rpcUrl: chain.rpcUrl,
      deployment,
      operatorAddress: roles.operator,
      /** The administration wallet (ADMIN_ROLE), another key than the operator's. */
      adminAddress: roles.admin,
      /** The bootstrap admin client (OAuth 2.0 client credentials with the admin scope). */
      admin,
      /** The first API process (the one restartApi acts on); `apis` lists all API_PROCESSES of them. */
      get api() {
        return apis.all[0];
      },
      apis: apis.all as readonly ApiHandle[],
      /** Stops the first API (clean: SIGTERM; unclean: SIGKILL) and starts it again on the same port. */
      restartApi: apis.restartFirst,
      /** Another API process on the same database and chain (horizontal scaling), optionally with other settings. */
      startExtraApi: apis.startExtra,
      get indexer() {
        return indexer.current();
      },
      get chain() {
        return chain.current();
      },
      /** Embedded chain: stop it (clean: snapshot first; unclean: SIGKILL) and start it again on its saved state. */
      async restartChain(mode: "clean" | "unclean") {
        await chain.stop(mode);
        await chain.start();
      },
      stopChain: chain.stop,
      startChain: chain.start,
      /** Embedded Postgres: stop it (fast shutdown: open connections are cut) and start it again on the same data. */
      restartPostgres: postgres.restart,
      stop: startup.stopAll,
    };
  } catch (error) {
    await startup.stopAll();
    throw error;
  }
}

/** What the start-up steps share: the settings, the log, the children, and what stops each part (stopPlan.ts). */
function newStartup(
  config: Config,
  env: NodeJS.ProcessEnv,
  options: StackOptions,
  log: (line: string) => void,
  lock: { release(): Promise<void> },
) {
  let stopping = false;
  const stops = new StopPlan();
  const began = performance.now();
  // Every API, worker and indexer process while it runs, ready or still starting: stopped together.
  const children = new Set<ManagedProcess>();
  stops.add("processes", async (graceMs) => void (await Promise.all([...children].map((c) => c.stop(graceMs)))));
  stops.add("release", () => lock.release());
  const adopt = (child: ManagedProcess) => {
    children.add(child);
    void child.exited.then(() => children.delete(child));
    return child;
  };
  return {
    config,
    env,
    options,
    log,
    stops,
    adopt,
    /** Set when the stack is being stopped: from then on a child's exit is expected, never a crash to recover from. */
    get stopping() {
      return stopping;
    },
    /** Throws when start-up was aborted (options.signal). */
    checkpoint: () => options.signal?.throwIfAborted(),
    /** Says what start-up does next, seconds after it began (no step is silent for long), unless it was aborted. */
    step(doing: string) {
      options.signal?.throwIfAborted();
      log(`  ${((performance.now() - began) / 1000).toFixed(1).padStart(5)} s  ${doing}…`);
    },
    /** A Node process running api/src/<script>, logged to DATA_DIR/logs/<name>.log. */
    spawn: (name: string, script: string, childEnv: NodeJS.ProcessEnv, ipc = false) =>
      spawnNode({
        name,
        script: path.join(REPO_ROOT, "api", "src", script),
        env: childEnv,
        cwd: REPO_ROOT,
        logDir: path.join(config.dataDir, "logs"),
        echo: options.echo,
        ipc,
        dataDir: config.dataDir,
      }).then(adopt),
    async stopAll() {
      stopping = true;
      await stops.run(log);
    },
  };
}
type Startup = ReturnType<typeof newStartup>;

/**
 * The embedded stack is a development stack: it turns the development conveniences on (unless told otherwise),
 * where they are allowed (not production, loopback host, embedded or loopback database and chain), and says so.
 */
function stackEnvironment(options: StackOptions, log: (line: string) => void): NodeJS.ProcessEnv {
  const env = { ...process.env, ...options.env };
  const allowed = devConveniencesProblems(loadConfig({ ...env, DEV_CONVENIENCES: "false" })).length === 0;
  if (!env.DEV_CONVENIENCES && env.NODE_ENV !== "production" && allowed) {
    env.DEV_CONVENIENCES = "true";
    log(
      "development conveniences on (DEV_CONVENIENCES=true): passwordless development sign-in and generated secrets; never for real data",
    );
  }
  return env;
}

/** Every port before anything starts, so a taken one never leaves half a stack behind. */
async function assertStackPortsFree(config: Config): Promise<void> {
  if (!config.databaseUrl) await assertPortFree(config.embeddedPostgresPort, "embedded Postgres", "EMBEDDED_PG_PORT");
  if (!config.chainRpcUrl) await assertPortFree(config.chainPort, "local chain", "CHAIN_PORT");
  if (config.startIndexer) await assertPortFree(config.indexerPort, "indexer", "INDEXER_PORT");
  if (config.port !== 0) await assertPortFree(config.port, "API", "PORT", config.host);
}

/** Embedded Postgres unless DATABASE_URL names one. */
async function startPostgres({ config, log, stops }: Startup) {
  if (config.databaseUrl) {
    const restart = () => Promise.reject(new Error("Postgres is external (DATABASE_URL): not ours to restart"));
    return { databaseUrl: config.databaseUrl, embedded: false, restart };
  }
  let postgres = await startEmbeddedPostgres(config.dataDir, config.embeddedPostgresPort, log);
  stops.add("services", (graceMs) => postgres.stop(graceMs));
  const restart = async () => {
    await postgres.stop();
    postgres = await startEmbeddedPostgres(config.dataDir, config.embeddedPostgresPort, log);
  };
  return { databaseUrl: postgres.databaseUrl, embedded: true, restart };
}

/** Embedded anvil unless CHAIN_RPC_URL names a chain. */
async function startChain({ config, options, log, stops }: Startup) {
  const chainDir = path.join(config.dataDir, "chain");
  const epochFile = path.join(chainDir, "epoch");
  const cleanMarker = path.join(chainDir, "clean-shutdown");
  let epoch = Number((await readFile(epochFile, "utf8").catch(() => "0")).trim()) || 0;
  let chain: LocalChain | undefined;
  const part = {
    rpcUrl: config.chainRpcUrl ?? "",
    /** The chain's WebSocket endpoint (new blocks announced), or "" to poll: anvil serves it on its HTTP port. */
    wsUrl: config.chainRpcUrl ? (config.chainWsUrl ?? "") : "",
    embedded: !config.chainRpcUrl,
    /** The indexing epoch: a new one makes the indexer index from scratch on a fresh schema. */
    epoch: () => epoch,
    nextEpoch: () => writeFile(epochFile, String(++epoch)),
    current: () => chain,
    async start() {
      await assertPortFree(config.chainPort, "local chain", "CHAIN_PORT");
      const { dataDir, chainPort: port, chainId } = config;
      chain = await startLocalChain({ dataDir, port, chainId, snapshotIntervalMs: options.chainSnapshotMs ?? 250 });
      await rm(cleanMarker, { force: true });
    },
    /** clean: saved, then stopped (killed after `graceMs`; then it is not marked clean); unclean: killed unsaved. */
    async stop(mode: "clean" | "unclean", graceMs?: number) {
      if (mode === "unclean") await chain?.kill();
      else if (await chain?.stop(graceMs)) await writeFile(cleanMarker, new Date().toISOString());
      chain = undefined;
    },
  };
  if (!part.embedded) return part;
  if (existsSync(path.join(chainDir, "state.json")) && !existsSync(cleanMarker)) {
    // The chain may have lost its last blocks: index from scratch rather than trust a reorg deeper than finality.
    epoch += 1;
    log(
      "local chain was not stopped cleanly: it restarts from its last snapshot and the outbox re-broadcasts what it lost",
    );
  }
  await mkdir(chainDir, { recursive: true });
  await writeFile(epochFile, String(epoch));
  await part.start();
  part.rpcUrl = chain!.rpcUrl;
  part.wsUrl = chain!.rpcUrl.replace(/^http/, "ws");
  // Saved first, before anything else stops; saved again when it stops, after the APIs' last transactions.
  stops.add("save", async () => chain?.snapshot());
  stops.add("services", (graceMs) => part.stop("clean", graceMs));
  return part;
}
type ChainPart = Awaited<ReturnType<typeof startChain>>;

/**
 * The operator (OPERATOR_ROLE) and the administration wallet (ADMIN_ROLE) are two keys: the operator's hot wallet
 * never administers. With SIGNER=remote each is a key the remote signer holds (checked with eth_accounts); else
 * imported from its private key, or created on the embedded chain. Needed before deploying: they receive the roles.
 */
async function roleWallets(
  { config, stops }: Startup,
  databaseUrl: string,
  chain: ChainPart,
): Promise<{ operator: string; admin: string }> {
  const pool = createPool(databaseUrl, config.apiSchema, 4);
  stops.add("services", () => pool.end());
  await migrate(pool, config.apiSchema);
  const chainNonce = async (address: string) =>
    BigInt(await rpc<string>(chain.rpcUrl, "eth_getTransactionCount", [address, "pending"]));
  const wallets = new WalletStore(pool, new KeyVault(await masterKeyOf(config)), undefined, chainNonce);
  const services = { wallets, signer: createSigner(config, wallets) };
  const roleWallet = async (purpose: "OPERATOR" | "ADMIN", found?: string, privateKey?: string, setting?: string) => {
    const address =
      found ??
      (privateKey
        ? await wallets.import(privateKey, purpose, null, 0n)
        : chain.embedded
          ? await wallets.create(purpose, null)
          : undefined);
    if (!address) throw new Error(`${setting} is required with an external chain (the wallet holding ${purpose}_ROLE)`);
    return address;
  };
  const foundOperator = await operatorWallet(config, services);
  const operator = await roleWallet("OPERATOR", foundOperator, config.operatorPrivateKey, "OPERATOR_PRIVATE_KEY");
  const foundAdmin = await administratorWallet(config, services);
  const admin = await roleWallet("ADMIN", foundAdmin, config.adminWalletPrivateKey, "ADMIN_WALLET_PRIVATE_KEY");
  for (const funded of chain.embedded ? [operator, admin] : [])
    await rpc(chain.rpcUrl, "anvil_setBalance", [funded, "0x3635c9adc5dea00000"]); // 1000 ETH
  return { operator, admin };
}

/**
 * The contracts: read from DEPLOYMENT_FILE on an external chain. On the embedded chain the deployment is reused when
 * its contracts exist there; otherwise the reviewed build is deployed with Ignition (abis/build.json: nothing is
 * compiled, so a fresh clone's first start deploys in seconds).
 */
async function ensureDeployed(
  { config, step }: Startup,
  chain: ChainPart,
  roles: { operator: string; admin: string },
): Promise<Deployment> {
  if (!chain.embedded) return loadDeployment(config);
  const file = config.deploymentFile!;
  const existing: Deployment | undefined = await readFile(file, "utf8").then(JSON.parse, () => undefined);
  if (
    existing &&
    (await rpc<string>(chain.rpcUrl, "eth_getCode", [existing.contracts.LicenceToken, "latest"])) !== "0x"
  )
    return existing;
  step("deploying the reviewed build (abis/build.json) to the local chain with Ignition, about 5 s");
  const hardhat = path.join(REPO_ROOT, "node_modules", "hardhat", "dist", "src", "cli.js");
  await run(process.execPath, [hardhat, "run", "--no-compile", "scripts/deploy.ts", "--network", "localhost"], {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      CHAIN_RPC_URL: chain.rpcUrl,
      DEPLOYMENT_FILE: file,
      // Ignition's journal for this data directory's chain, kept with its data.
      IGNITION_DIR: path.join(config.dataDir, "ignition"),
      DEPLOYMENT_ID: `embedded-${config.chainId}`,
      // Three keys: governance is the deployer (anvil's first development account, whose public key the API is
      // given on this chain only, to register departments and workflows), the administration wallet and the
      // operator wallet.
      OPERATOR_ADDRESS: roles.operator,
      ADMIN_ADDRESS: roles.admin,
      KEEPER_ADDRESS: roles.operator,
      WALLET_DELAY_SECONDS: String(config.walletDelaySeconds),
      VERIFY_BASE_URL: `${config.publicBaseUrl}/api/v1/verify/`,
    },
    maxBuffer: 16 * 1024 * 1024,
  });
  return JSON.parse(await readFile(file, "utf8")) as Deployment;
}

/**
 * When `child` exits unbidden (neither stopped nor the stack stopping), says so and runs `restart` (which says what
 * it started) after `delayMs`; with `retry`, again until it succeeds, the delay doubling up to 30 s.
 */
function restartOnCrash(
  startup: Startup,
  child: ManagedProcess,
  doing: string,
  restart: () => Promise<string>,
  { delayMs = 0, retry = false } = {},
): void {
  const log = startup.log;
  const unbidden = () => !startup.stopping && !child.stopRequested();
  void child.exited.then(async (code) => {
    while (unbidden()) {
      log(`${child.name} (pid ${child.pid}) exited unexpectedly (code ${code}); ${doing}:\n${child.tail()}`);
      await sleep(delayMs);
      if (!unbidden()) return;
      try {
        return log(await restart());
      } catch (error) {
        if (!startup.stopping) log(`${child.name} restart failed: ${(error as Error).message}`);
        if (!retry) return;
        delayMs = Math.min(delayMs * 2, 30_000);
      }
    }
  });
}

/**
 * The Ponder indexer (when START_INDEXER), watched: Ponder exits on what it cannot recover from (e.g. a reorg deeper
 * than its finality after the local chain lost blocks). It is then started again to index from scratch on a fresh
 * schema; the views keep serving meanwhile.
 */
async function startWatchedIndexer(startup: Startup, databaseUrl: string, chain: ChainPart) {
  const { config } = startup;
  let indexer: IndexerHandle | undefined;
  const launch = async () => {
    indexer = await startIndexer({
      onSpawn: startup.adopt,
      repoRoot: REPO_ROOT,
      dataDir: config.dataDir,
      databaseUrl,
      rpcUrl: chain.rpcUrl,
      // Only where blocks keep coming (an external chain): on an automining anvil with no writes, a subscription
      // brings no block, so after a restart the indexer would not catch up until the next write.
      wsUrl: chain.embedded ? "" : chain.wsUrl,
      deploymentFile: config.deploymentFile!,
      port: config.indexerPort,
      epoch: chain.epoch(),
      echo: startup.options.echo,
    });
    restartOnCrash(startup, indexer.process, "restarting it, re-indexing on a fresh schema", async () => {
      await chain.nextEpoch();
      await assertPortFree(config.indexerPort, "indexer", "INDEXER_PORT");
      await launch();
      return `indexer restarted (pid ${indexer!.process.pid}), indexing on schema ${indexer!.schema}`;
    });
  };
  if (config.startIndexer) await launch();
  return { current: () => indexer };
}

/**
 * The bootstrap admin client: ADMIN_CLIENT_ID and ADMIN_CLIENT_SECRET, or, only with DEV_CONVENIENCES, generated once
 * and kept under DATA_DIR (npm start prints a generated secret, never one the operator supplied).
 */
async function bootstrapAdminClient(config: Config) {
  if ((!config.adminClientId || !config.adminClientSecret) && !config.devConveniences)
    throw new Error(
      "ADMIN_CLIENT_ID and ADMIN_CLIENT_SECRET are required (generated only with DEV_CONVENIENCES=true, for a local stack)",
    );
  const clientId =
    config.adminClientId ?? `admin-${(await developmentSecret(config.dataDir, "admin-client-id", 6)).slice(2)}`;
  const clientSecret =
    config.adminClientSecret ?? (await developmentSecret(config.dataDir, "admin-client-secret", 24)).slice(2);
  // Whether its secret was generated here: only then may it be printed.
  return { clientId, clientSecret, secretGenerated: !config.adminClientSecret };
}

/** The environment of the API and worker processes: where every part the stack started can be reached. */
function apiEnvironment(
  { config, env }: Startup,
  parts: { databaseUrl: string; chain: ChainPart; indexer?: IndexerHandle; admin: BootstrapAdmin },
): NodeJS.ProcessEnv {
  return {
    ...env,
    ADMIN_CLIENT_ID: parts.admin.clientId,
    ADMIN_CLIENT_SECRET: parts.admin.clientSecret,
    // One issuer for every API process, so a token from one is accepted by all (horizontal scaling).
    JWT_ISSUER: config.jwtIssuer,
    API_DB_SCHEMA: config.apiSchema,
    DATABASE_URL: parts.databaseUrl,
    CHAIN_RPC_URL: parts.chain.rpcUrl,
    CHAIN_WS_URL: parts.chain.wsUrl,
    CHAIN_ID: String(config.chainId),
    DEPLOYMENT_FILE: config.deploymentFile!,
    INDEXER_URL: parts.indexer?.url ?? config.indexerUrl,
    CHAIN_FUNDING: parts.chain.embedded ? "anvil" : config.chainFunding,
    // Governance (DEFAULT_ADMIN_ROLE) registers departments and workflows. On the embedded development chain it is
    // the deployer, anvil's first development account, whose key is public: the API gets it there and only there.
    ...(parts.chain.embedded && config.chainId === DEVELOPMENT_CHAIN_ID && !env.GOVERNANCE_PRIVATE_KEY
      ? { GOVERNANCE_PRIVATE_KEY: DEVELOPMENT_GOVERNANCE_KEY }
      : {}),
    // With workers of its own the stack leaves jobs to them, unless told otherwise.
    JOBS_IN_API: env.JOBS_IN_API || (config.workerProcesses > 0 ? "false" : "true"),
  };
}

/** One API process, resolved once it says it listens (over IPC); an exit during start-up rejects with its output. */
async function startApi(
  { config, spawn }: Startup,
  apiEnv: NodeJS.ProcessEnv,
  port: number,
  name: string,
  extraEnv: NodeJS.ProcessEnv,
  checkPort: boolean,
) {
  if (checkPort && port !== 0) await assertPortFree(port, "API", "PORT", config.host);
  const baseUrl = `http://${config.host}:${port}`;
  const child = await spawn(
    name,
    "main.ts",
    { ...apiEnv, PORT: String(port), PUBLIC_BASE_URL: baseUrl, ...extraEnv },
    true,
  );
  const listening = await new Promise<number>((resolve, reject) => {
    child.child.on("message", (message: { type?: string; port?: number }) => {
      if (message?.type === "listening" && message.port) resolve(message.port);
    });
    void child.exited.then(() => reject(new Error(`API exited during start-up:\n${child.tail()}`)));
  });
  const url = `http://${config.host}:${listening}`;
  // SIGTERM, then SIGKILL after `graceMs` (default 10 s).
  return { url, port: listening, process: child, stop: (graceMs?: number) => child.stop(graceMs) };
}

/**
 * API_PROCESSES API processes on one port (the others join the first one's; PORT=0: the one it was given). The
 * supervisor restarts one that dies (and says so); one it stops or kills itself is not a crash.
 */
async function startApis(startup: Startup, apiEnv: NodeJS.ProcessEnv) {
  const all: ApiHandle[] = [];
  const name = (index: number) => (index === 0 ? "api" : `api-${index + 1}`);
  const start = async (index: number, port: number, extraEnv?: NodeJS.ProcessEnv, checkPort = false) => {
    const env = { API_INSTANCE: name(index), ...extraEnv };
    const api = (all[index] = await startApi(startup, apiEnv, port, name(index), env, checkPort));
    const restart = () => start(index, api.port).then((again) => `${name(index)} restarted (pid ${again.process.pid})`);
    restartOnCrash(startup, api.process, `restarting it on port ${api.port}`, restart, { delayMs: 500, retry: true });
    return api;
  };
  await start(0, startup.config.port, {}, true);
  for (let index = 1; index < startup.config.apiProcesses; index++) {
    startup.checkpoint();
    await start(index, all[0].port);
  }
  let extras = 0;
  return {
    all,
    async restartFirst(mode: "clean" | "unclean", extraEnv?: NodeJS.ProcessEnv) {
      const old = all[0];
      await (mode === "clean" ? old.stop() : old.process.kill());
      await start(0, old.port, extraEnv, all.length === 1);
    },
    /** Another API process on the same database and chain (not supervised), stopped with the stack. */
    startExtra: async (port?: number, extraEnv: NodeJS.ProcessEnv = {}) =>
      startApi(startup, apiEnv, port ?? (await freePort(startup.config.host)), `api-extra-${++extras}`, extraEnv, true),
  };
}

/** Workers (WORKER_PROCESSES): job runners of their own, restarted like the APIs when they die. */
async function startWorkers(startup: Startup, apiEnv: NodeJS.ProcessEnv): Promise<void> {
  const startWorker = async (name: string) => {
    const worker = await startup.spawn(name, "worker.ts", apiEnv);
    restartOnCrash(startup, worker, "restarting it", () => startWorker(name), { delayMs: 1_000 });
    return `${name} restarted (pid ${worker.pid})`;
  };
  for (let index = 1; index <= startup.config.workerProcesses; index++) await startWorker(`worker-${index}`);
}
