/**
 * The whole platform on one machine: Postgres (embedded unless DATABASE_URL), a chain (embedded anvil unless
 * CHAIN_RPC_URL), the contracts (deployed when the embedded chain has none), the Ponder indexer and the API.
 * Used by `npm start` and by the tests' global fixture.
 */
import { execFile } from "node:child_process";
import { mkdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { devConveniencesProblems, loadConfig, type Config } from "../../api/src/config.ts";
import { KeyVault } from "../../api/src/chain/keyVault.ts";
import { WalletStore } from "../../api/src/chain/walletStore.ts";
import { loadDeployment, type Deployment } from "../../api/src/chain/deployment.ts";
import { migrate } from "../../api/src/db/migrate.ts";
import { createPool } from "../../api/src/db/pool.ts";
import { administratorWallet, createSigner, masterKeyOf, operatorWallet } from "../../api/src/services.ts";
import { developmentSecret } from "../../api/src/developmentSecrets.ts";
import { startEmbeddedPostgres, type EmbeddedPostgresHandle } from "./embeddedPostgres.ts";
import { startIndexer, type IndexerHandle } from "./indexerProcess.ts";
import { rpc, startLocalChain, type LocalChain } from "./localChain.ts";
import { spawnNode, type ManagedProcess } from "./managedProcess.ts";
import { removePid, stopAllStale } from "./pidFile.ts";
import { lockStack, runningStack, StackAlreadyRunning } from "./stackLock.ts";
import { assertPortFree, freePort } from "./ports.ts";

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
}

export interface ApiHandle {
  url: string;
  port: number;
  process: ManagedProcess;
  stop(): Promise<void>;
}

export interface Stack {
  config: Config;
  env: NodeJS.ProcessEnv;
  databaseUrl: string;
  rpcUrl: string;
  deployment: Deployment;
  operatorAddress: string;
  /** The administration wallet (ADMIN_ROLE), another key than the operator's. */
  adminAddress: string;
  /** The bootstrap admin client (OAuth 2.0 client credentials with the admin scope). */
  admin: { clientId: string; clientSecret: string };
  /** The first API process (the one restartApi acts on); `apis` lists all API_PROCESSES of them. */
  readonly api: ApiHandle;
  readonly apis: readonly ApiHandle[];
  readonly indexer?: IndexerHandle;
  readonly chain?: LocalChain;
  /** Embedded chain: stop it (clean: snapshot first; unclean: SIGKILL) and start it again on its saved state. */
  restartChain(mode: "clean" | "unclean"): Promise<void>;
  stopChain(mode: "clean" | "unclean"): Promise<void>;
  startChain(): Promise<void>;
  /** Embedded Postgres: stop it (fast shutdown: open connections are cut) and start it again on the same data. */
  restartPostgres(): Promise<void>;
  /** Stops the API (clean: SIGTERM; unclean: SIGKILL) and starts it again on the same port. */
  restartApi(mode: "clean" | "unclean", extraEnv?: NodeJS.ProcessEnv): Promise<void>;
  /** Another API process on the same database and chain (horizontal scaling), optionally with other settings. */
  startExtraApi(port?: number, extraEnv?: NodeJS.ProcessEnv): Promise<ApiHandle>;
  stop(): Promise<void>;
}

export async function startStack(options: StackOptions = {}): Promise<Stack> {
  const env = { ...process.env, ...options.env };
  const log = options.log ?? ((line: string) => console.log(line));
  // The embedded stack is a development stack: it turns the development conveniences on (unless told otherwise),
  // where they are allowed (not production, loopback host, embedded or loopback database and chain), and says so.
  if (!env.DEV_CONVENIENCES && env.NODE_ENV !== "production" && devConveniencesProblems(loadConfig({ ...env, DEV_CONVENIENCES: "false" })).length === 0) {
    env.DEV_CONVENIENCES = "true";
    log("development conveniences on (DEV_CONVENIENCES=true): passwordless development sign-in and generated secrets; never for real data");
  }
  const config = loadConfig(env);
  // One stack per data directory: a second start says where the first one runs and touches nothing.
  const running = await runningStack(config.dataDir);
  if (running) throw new StackAlreadyRunning(running);
  await mkdir(config.dataDir, { recursive: true });
  const lock = await lockStack({ pid: process.pid, url: `http://${config.host}:${config.port}`, dataDir: config.dataDir, chainId: config.chainId });

  // Set when the stack is being stopped: from then on a child's exit is expected, never a crash to recover from.
  let stopping = false;
  const cleanups: (() => Promise<void>)[] = [async () => lock.release()];
  const stopAll = async () => {
    stopping = true;
    for (const cleanup of cleanups.reverse()) await cleanup().catch((error) => log(`stop: ${error.message}`));
    cleanups.length = 0;
  };

  const checkpoint = () => {
    if (options.signal?.aborted) throw new Error("start-up aborted");
  };
  try {
    // Children left running by a supervisor that was killed (its lock is gone with it) hold ports and data.
    await stopAllStale(config.dataDir, log);
    // Every port before anything starts, so a taken one never leaves half a stack behind.
    if (!config.databaseUrl) await assertPortFree(config.embeddedPostgresPort, "embedded Postgres", "EMBEDDED_PG_PORT");
    if (!config.chainRpcUrl) await assertPortFree(config.chainPort, "local chain", "CHAIN_PORT");
    if (config.startIndexer) await assertPortFree(config.indexerPort, "indexer", "INDEXER_PORT");
    if (config.port !== 0) await assertPortFree(config.port, "API", "PORT", config.host);

    // ---- Postgres
    let databaseUrl = config.databaseUrl;
    let postgres: EmbeddedPostgresHandle | undefined;
    if (!databaseUrl) {
      postgres = await startEmbeddedPostgres(config.dataDir, config.embeddedPostgresPort, log);
      databaseUrl = postgres.databaseUrl;
      cleanups.push(() => postgres!.stop());
    }

    checkpoint();
    // ---- Chain
    let chain: LocalChain | undefined;
    let rpcUrl = config.chainRpcUrl;
    const embeddedChain = !rpcUrl;
    const chainDir = path.join(config.dataDir, "chain");
    const cleanMarker = path.join(chainDir, "clean-shutdown");
    let epoch = Number((await readFile(path.join(chainDir, "epoch"), "utf8").catch(() => "0")).trim()) || 0;
    const startChainProcess = async () => {
      await assertPortFree(config.chainPort, "local chain", "CHAIN_PORT");
      chain = await startLocalChain({ dataDir: config.dataDir, port: config.chainPort, chainId: config.chainId, snapshotIntervalMs: config.chainSnapshotMs, log: () => {} });
      await rm(cleanMarker, { force: true });
    };
    const stopChainProcess = async (mode: "clean" | "unclean") => {
      if (!chain) return;
      if (mode === "clean") {
        await chain.stop();
        await writeFile(cleanMarker, new Date().toISOString());
      } else {
        await chain.kill();
      }
      await removePid(config.dataDir, "chain");
      chain = undefined;
    };
    if (embeddedChain) {
      const hadState = await stat(path.join(chainDir, "state.json")).then(() => true, () => false);
      const wasClean = await stat(cleanMarker).then(() => true, () => false);
      if (hadState && !wasClean) {
        // The chain may have lost its last blocks: index from scratch rather than trust a reorg deeper than finality.
        epoch += 1;
        log("local chain was not stopped cleanly: it restarts from its last snapshot and the outbox re-broadcasts what it lost");
      }
      await mkdir(chainDir, { recursive: true });
      await writeFile(path.join(chainDir, "epoch"), String(epoch));
      await startChainProcess();
      rpcUrl = chain!.rpcUrl;
      cleanups.push(() => stopChainProcess("clean"));
    }

    checkpoint();
    // ---- Operator wallet (needed before deploying: it receives the roles)
    const pool = createPool(databaseUrl, config.apiSchema, 4);
    cleanups.push(() => pool.end());
    await migrate(pool, config.apiSchema);
    const chainNonce = async (address: string) => BigInt(await rpc<string>(rpcUrl!, "eth_getTransactionCount", [address, "pending"]));
    const wallets = new WalletStore(pool, new KeyVault(await masterKeyOf(config)), undefined, chainNonce);
    // The operator (OPERATOR_ROLE) and the administration wallet (ADMIN_ROLE) are two keys: the operator's hot wallet
    // never administers. With SIGNER=remote each is a key the remote signer holds (checked with eth_accounts); else
    // imported from its private key, or created on the embedded chain.
    const signer = createSigner(config, wallets);
    const roleWallet = async (purpose: "OPERATOR" | "ADMIN", found: string | undefined, privateKey: string | undefined, setting: string) => {
      const address = found ?? (privateKey ? await wallets.import(privateKey, purpose, null, 0n) : embeddedChain ? await wallets.create(purpose, null) : undefined);
      if (!address) throw new Error(`${setting} is required with an external chain (the wallet holding ${purpose}_ROLE)`);
      return address;
    };
    const operatorAddress = await roleWallet("OPERATOR", await operatorWallet(config, { wallets, signer }), config.operatorPrivateKey, "OPERATOR_PRIVATE_KEY");
    const adminAddress = await roleWallet("ADMIN", await administratorWallet(config, { wallets, signer }), config.adminWalletPrivateKey, "ADMIN_WALLET_PRIVATE_KEY");
    if (embeddedChain) {
      for (const funded of [operatorAddress, adminAddress]) await rpc(rpcUrl!, "anvil_setBalance", [funded, "0x3635c9adc5dea00000"]); // 1000 ETH
    }

    checkpoint();
    // ---- Contracts
    const deploymentFile = config.deploymentFile!;
    const deployment = embeddedChain
      ? await ensureEmbeddedDeployment(rpcUrl!, deploymentFile, { operator: operatorAddress, admin: adminAddress }, config, log)
      : await loadDeployment(config);

    checkpoint();
    // ---- Indexer
    let indexer: IndexerHandle | undefined;
    // The indexer process being started (not ready yet): stopping the stack meanwhile stops it as well.
    let indexerStarting: ManagedProcess | undefined;
    const launchIndexer = async () => {
      indexer = await startIndexer({
        onSpawn: (spawned) => (indexerStarting = spawned),
        repoRoot: REPO_ROOT,
        dataDir: config.dataDir,
        databaseUrl: databaseUrl!,
        rpcUrl: rpcUrl!,
        deploymentFile,
        port: config.indexerPort,
        pollingMs: config.indexerPollingMs,
        epoch,
        echo: options.echo,
      });
      indexerStarting = undefined;
      // Watchdog: Ponder exits on what it cannot recover from (e.g. a reorg deeper than its finality after the
      // local chain lost blocks). Index again from scratch on a fresh schema; the views keep serving meanwhile.
      const watched = indexer;
      void watched.process.exited.then(async (code) => {
        if (stopping || watched.process.stopRequested()) return;
        log(`indexer (pid ${watched.process.pid}) exited unexpectedly (code ${code}); restarting it, re-indexing on a fresh schema:\n${watched.process.tail()}`);
        epoch += 1;
        try {
          await writeFile(path.join(chainDir, "epoch"), String(epoch));
          await assertPortFree(config.indexerPort, "indexer", "INDEXER_PORT");
          await launchIndexer();
          log(`indexer restarted (pid ${indexer!.process.pid}), indexing on schema ${indexer!.schema}`);
        } catch (error) {
          if (!stopping) log(`indexer restart failed: ${(error as Error).message}`);
        }
      });
    };
    if (config.startIndexer) {
      await launchIndexer();
      cleanups.push(async () => {
        await Promise.all([indexerStarting?.stop(), indexer!.stop()]);
        await removePid(config.dataDir, "indexer");
      });
    }

    checkpoint();
    // ---- Bootstrap admin client (development: generated once, kept under DATA_DIR, printed by npm start)
    const adminClientId = config.adminClientId ?? `admin-${(await developmentSecret(config.dataDir, "admin-client-id", 6)).slice(2)}`;
    const adminClientSecret = config.adminClientSecret ?? (await developmentSecret(config.dataDir, "admin-client-secret", 24)).slice(2);

    checkpoint();
    // ---- API
    const apiEnv: NodeJS.ProcessEnv = {
      ...env,
      ADMIN_CLIENT_ID: adminClientId,
      ADMIN_CLIENT_SECRET: adminClientSecret,
      // One issuer for every API process, so a token from one is accepted by all (horizontal scaling).
      JWT_ISSUER: config.jwtIssuer,
      DATABASE_URL: databaseUrl,
      CHAIN_RPC_URL: rpcUrl,
      CHAIN_ID: String(config.chainId),
      DEPLOYMENT_FILE: deploymentFile,
      INDEXER_URL: indexer?.url ?? config.indexerUrl,
      CHAIN_FUNDING: embeddedChain ? "anvil" : config.chainFunding,
      // With workers of its own the stack leaves jobs to them, unless told otherwise.
      JOBS_IN_API: env.JOBS_IN_API || (config.workerProcesses > 0 ? "false" : "true"),
    };
    // API processes spawned but not listening yet (a restart in progress): stopping the stack stops them too.
    const apisStarting = new Set<ManagedProcess>();
    const startApi = async (port: number, name: string, extraEnv: NodeJS.ProcessEnv = {}, checkPort = true): Promise<ApiHandle> => {
      if (checkPort && port !== 0) await assertPortFree(port, "API", "PORT", config.host);
      const processHandle = await spawnNode({
        name,
        script: path.join(REPO_ROOT, "api", "src", "main.ts"),
        env: { ...apiEnv, PORT: String(port), ...(extraEnv.PUBLIC_BASE_URL ? {} : { PUBLIC_BASE_URL: `http://${config.host}:${port}` }), ...extraEnv },
        cwd: REPO_ROOT,
        logDir: path.join(config.dataDir, "logs"),
        echo: options.echo,
        ipc: true,
        pidFile: { dataDir: config.dataDir, name },
      });
      apisStarting.add(processHandle);
      const listening = await new Promise<number>((resolve, reject) => {
        processHandle.child.on("message", (message: { type?: string; port?: number }) => {
          if (message?.type === "listening" && message.port) resolve(message.port);
        });
        processHandle.exited.then(() => reject(new Error(`API exited during start-up:\n${processHandle.tail()}`)));
      }).finally(() => apisStarting.delete(processHandle));
      return { url: `http://${config.host}:${listening}`, port: listening, process: processHandle, stop: () => processHandle.stop() };
    };
    checkpoint();
    // The supervisor restarts an API process that dies (and says so); one it stops or kills itself is not a crash.
    const apis: ApiHandle[] = [];
    const apiName = (index: number) => (index === 0 ? "api" : `api-${index + 1}`);
    const supervise = (index: number) => {
      const watched = apis[index];
      void watched.process.exited.then(async (code) => {
        let delayMs = 500;
        while (!stopping && !watched.process.stopRequested() && apis[index] === watched) {
          log(`${apiName(index)} (pid ${watched.process.pid}) exited unexpectedly (code ${code}); restarting it on port ${watched.port}:\n${watched.process.tail()}`);
          await new Promise((r) => setTimeout(r, delayMs));
          if (stopping || apis[index] !== watched) return;
          try {
            apis[index] = await startApi(watched.port, apiName(index), { API_INSTANCE: apiName(index) }, false);
            log(`${apiName(index)} restarted (pid ${apis[index].process.pid})`);
            supervise(index);
            return;
          } catch (error) {
            log(`${apiName(index)} restart failed: ${(error as Error).message}`);
            delayMs = Math.min(delayMs * 2, 30_000);
          }
        }
      });
    };
    apis.push(await startApi(config.port, apiName(0), { API_INSTANCE: apiName(0) }));
    supervise(0);
    // The others join the first one's port (PORT=0: the one it was given).
    for (let index = 1; index < config.apiProcesses; index++) {
      checkpoint();
      apis.push(await startApi(apis[0].port, apiName(index), { API_INSTANCE: apiName(index) }, false));
      supervise(index);
    }
    cleanups.push(async () => {
      await Promise.all([...apisStarting].map((starting) => starting.stop()));
      await Promise.all(apis.map(async (api, index) => {
        await api.stop();
        await removePid(config.dataDir, apiName(index));
      }));
    });
    await lock.update({
      url: apis[0].url,
      chainRpcUrl: rpcUrl,
      embeddedPostgresPort: postgres ? config.embeddedPostgresPort : undefined,
      indexerUrl: apiEnv.INDEXER_URL,
      deploymentFile,
      chainFunding: apiEnv.CHAIN_FUNDING,
      jwtIssuer: config.jwtIssuer,
      apiSchema: config.apiSchema,
    });
    // ---- Workers (WORKER_PROCESSES): job runners of their own, restarted like the APIs when they die.
    const workers: ManagedProcess[] = [];
    const startWorker = async (index: number) => {
      const worker = await spawnNode({
        name: `worker-${index + 1}`,
        script: path.join(REPO_ROOT, "api", "src", "worker.ts"),
        env: apiEnv,
        cwd: REPO_ROOT,
        logDir: path.join(config.dataDir, "logs"),
        echo: options.echo,
        pidFile: { dataDir: config.dataDir, name: `worker-${index + 1}` },
      });
      workers[index] = worker;
      void worker.exited.then(async (code) => {
        if (stopping || worker.stopRequested()) return;
        log(`worker-${index + 1} (pid ${worker.pid}) exited unexpectedly (code ${code}); restarting it:\n${worker.tail()}`);
        await new Promise((r) => setTimeout(r, 1_000));
        if (!stopping) await startWorker(index).catch((error) => log(`worker-${index + 1} restart failed: ${error.message}`));
      });
    };
    for (let index = 0; index < config.workerProcesses; index++) await startWorker(index);
    cleanups.push(async () => {
      await Promise.all(workers.map(async (worker, index) => {
        await worker.stop();
        await removePid(config.dataDir, `worker-${index + 1}`);
      }));
    });

    const extraApis: ApiHandle[] = [];
    cleanups.push(async () => {
      for (const [index, extra] of extraApis.entries()) {
        await extra.stop();
        await removePid(config.dataDir, `api-extra-${index + 1}`);
      }
    });

    return {
      config,
      env: apiEnv,
      databaseUrl,
      rpcUrl: rpcUrl!,
      deployment,
      operatorAddress,
      adminAddress,
      admin: { clientId: adminClientId, clientSecret: adminClientSecret },
      get api() {
        return apis[0];
      },
      get apis() {
        return apis;
      },
      async restartApi(mode, extraEnv) {
        const old = apis[0];
        if (mode === "clean") await old.stop();
        else await old.process.kill();
        apis[0] = await startApi(old.port, apiName(0), { API_INSTANCE: apiName(0), ...extraEnv }, apis.length === 1);
        supervise(0);
      },
      get indexer() {
        return indexer;
      },
      get chain() {
        return chain;
      },
      async restartChain(mode) {
        await stopChainProcess(mode);
        await startChainProcess();
      },
      stopChain: stopChainProcess,
      async restartPostgres() {
        if (!postgres) throw new Error("Postgres is external (DATABASE_URL): not ours to restart");
        await postgres.stop();
        postgres = await startEmbeddedPostgres(config.dataDir, config.embeddedPostgresPort, log);
      },
      startChain: startChainProcess,
      async startExtraApi(port?: number, extraEnv?: NodeJS.ProcessEnv) {
        const extra = await startApi(port ?? (await freePort(config.host)), `api-extra-${extraApis.length + 1}`, extraEnv);
        extraApis.push(extra);
        return extra;
      },
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

/** Reuses the embedded deployment when its contracts exist on the chain; otherwise deploys with Ignition. */
async function ensureEmbeddedDeployment(
  rpcUrl: string,
  file: string,
  roles: { operator: string; admin: string },
  config: Config,
  log: (l: string) => void,
): Promise<Deployment> {
  const existing = await readFile(file, "utf8").then((t) => JSON.parse(t) as Deployment, () => undefined);
  if (existing && (await rpc<string>(rpcUrl, "eth_getCode", [existing.contracts.LicenceToken, "latest"])) !== "0x") return existing;
  log("deploying the contracts to the local chain (Ignition)…");
  const hardhat = path.join(REPO_ROOT, "node_modules", "hardhat", "dist", "src", "cli.js");
  await run(process.execPath, [hardhat, "run", "scripts/deploy.ts", "--network", "localhost"], {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      CHAIN_RPC_URL: rpcUrl,
      DEPLOYMENT_FILE: file,
      // Ignition's journal for this data directory's chain, kept with its data.
      IGNITION_DIR: path.join(config.dataDir, "ignition"),
      DEPLOYMENT_ID: `embedded-${config.chainId}`,
      // Three keys: governance is the deployer (anvil's first development account, not held by the API), the
      // API holds the administration wallet and the operator wallet.
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
