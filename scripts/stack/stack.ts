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
import { masterKeyOf } from "../../api/src/services.ts";
import { developmentSecret } from "../../api/src/developmentSecrets.ts";
import { startEmbeddedPostgres, type EmbeddedPostgresHandle } from "./embeddedPostgres.ts";
import { startIndexer, type IndexerHandle } from "./indexerProcess.ts";
import { rpc, startLocalChain, type LocalChain } from "./localChain.ts";
import { spawnNode, type ManagedProcess } from "./managedProcess.ts";
import { removePid, stopStale } from "./pidFile.ts";
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
  /** The bootstrap admin client (OAuth 2.0 client credentials with the admin scope). */
  admin: { clientId: string; clientSecret: string };
  readonly api: ApiHandle;
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
  await mkdir(config.dataDir, { recursive: true });
  for (const name of ["api", "api-2", "api-3", "indexer", "chain"]) await stopStale(config.dataDir, name, log);

  const cleanups: (() => Promise<void>)[] = [];
  const stopAll = async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch((error) => log(`stop: ${error.message}`));
    cleanups.length = 0;
  };

  const checkpoint = () => {
    if (options.signal?.aborted) throw new Error("start-up aborted");
  };
  try {
    // ---- Postgres
    let databaseUrl = config.databaseUrl;
    let postgres: EmbeddedPostgresHandle | undefined;
    if (!databaseUrl) {
      await assertPortFree(config.embeddedPostgresPort, "embedded Postgres", "EMBEDDED_PG_PORT");
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
    const wallets = new WalletStore(pool, new KeyVault(await masterKeyOf(config)));
    let operatorAddress = await wallets.findByPurpose("OPERATOR");
    if (!operatorAddress) {
      operatorAddress = config.operatorPrivateKey
        ? await wallets.import(config.operatorPrivateKey, "OPERATOR", null, 0n)
        : embeddedChain
          ? await wallets.create("OPERATOR", null)
          : undefined;
      if (!operatorAddress) throw new Error("OPERATOR_PRIVATE_KEY is required with an external chain (the wallet holding OPERATOR_ROLE)");
    }
    if (embeddedChain) await rpc(rpcUrl!, "anvil_setBalance", [operatorAddress, "0x3635c9adc5dea00000"]); // 1000 ETH

    checkpoint();
    // ---- Contracts
    const deploymentFile = config.deploymentFile!;
    const deployment = embeddedChain
      ? await ensureEmbeddedDeployment(rpcUrl!, deploymentFile, operatorAddress, config, log)
      : await loadDeployment(config);

    checkpoint();
    // ---- Indexer
    let indexer: IndexerHandle | undefined;
    let stopping = false;
    const launchIndexer = async () => {
      indexer = await startIndexer({
        repoRoot: REPO_ROOT,
        dataDir: config.dataDir,
        databaseUrl: databaseUrl!,
        rpcUrl: rpcUrl!,
        deploymentFile,
        port: config.indexerPort,
        pollingMs: config.indexerPollingMs,
        viewsSchema: config.indexViewsSchema,
        epoch,
        echo: options.echo,
      });
      // Watchdog: Ponder exits on what it cannot recover from (e.g. a reorg deeper than its finality after the
      // local chain lost blocks). Index again from scratch on a fresh schema; the views keep serving meanwhile.
      void indexer.process.exited.then(async () => {
        if (stopping) return;
        log(`indexer exited unexpectedly; re-indexing on a fresh schema:\n${indexer!.process.tail()}`);
        epoch += 1;
        await writeFile(path.join(chainDir, "epoch"), String(epoch));
        await assertPortFree(config.indexerPort, "indexer", "INDEXER_PORT");
        await launchIndexer().catch((error) => log(`indexer restart failed: ${error.message}`));
      });
    };
    if (config.startIndexer) {
      await assertPortFree(config.indexerPort, "indexer", "INDEXER_PORT");
      await launchIndexer();
      cleanups.push(async () => {
        stopping = true;
        await indexer!.stop();
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
    };
    const startApi = async (port: number, name: string, extraEnv: NodeJS.ProcessEnv = {}): Promise<ApiHandle> => {
      if (port !== 0) await assertPortFree(port, "API", "PORT", config.host);
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
      const listening = await new Promise<number>((resolve, reject) => {
        processHandle.child.on("message", (message: { type?: string; port?: number }) => {
          if (message?.type === "listening" && message.port) resolve(message.port);
        });
        processHandle.exited.then(() => reject(new Error(`API exited during start-up:\n${processHandle.tail()}`)));
      });
      return { url: `http://${config.host}:${listening}`, port: listening, process: processHandle, stop: () => processHandle.stop() };
    };
    checkpoint();
    let api = await startApi(config.port, "api");
    cleanups.push(async () => {
      await api.stop();
      await removePid(config.dataDir, "api");
    });
    const extraApis: ApiHandle[] = [];
    cleanups.push(async () => {
      for (const extra of extraApis) await extra.stop();
    });

    return {
      config,
      env: apiEnv,
      databaseUrl,
      rpcUrl: rpcUrl!,
      deployment,
      operatorAddress,
      admin: { clientId: adminClientId, clientSecret: adminClientSecret },
      get api() {
        return api;
      },
      async restartApi(mode, extraEnv) {
        if (mode === "clean") await api.stop();
        else await api.process.kill();
        api = await startApi(api.port, "api", extraEnv);
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
        const extra = await startApi(port ?? (await freePort(config.host)), `api-${extraApis.length + 2}`, extraEnv);
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
async function ensureEmbeddedDeployment(rpcUrl: string, file: string, operator: string, config: Config, log: (l: string) => void): Promise<Deployment> {
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
      OPERATOR_ADDRESS: operator,
      ADMIN_ADDRESS: operator,
      KEEPER_ADDRESS: operator,
      VERIFY_BASE_URL: `${config.publicBaseUrl}/api/v1/verify/`,
    },
    maxBuffer: 16 * 1024 * 1024,
  });
  return JSON.parse(await readFile(file, "utf8")) as Deployment;
}
