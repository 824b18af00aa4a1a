/**
 * Builds the API's long-lived services from configuration: pool, migrations, provider, wallets, chain gateway,
 * index progress. Used by the API process and by the stack supervisor (which needs the operator wallet before
 * deploying).
 */
import { FetchRequest, JsonRpcProvider } from "ethers";
import pg from "pg";
import type { Logger } from "pino";
import { assertConfiguredSecrets, type Config } from "./config.ts";
import { assertAuditTableRights } from "./db/auditTableRights.ts";
import { applicantAddresses } from "./chain/applicantKeys.ts";
import { ChainGateway } from "./chain/chainGateway.ts";
import { departmentWallets } from "./chain/departmentWallets.ts";
import { KeyVault } from "./chain/keyVault.ts";
import { loadCredentialKey } from "./chain/credentialKey.ts";
import { LocalVaultSigner } from "./chain/localVaultSigner.ts";
import { governanceKey, governanceWallet, withGovernanceKey } from "./chain/governanceKey.ts";
import { RemoteSigner } from "./chain/remoteSigner.ts";
import { secretSealer } from "./chain/secretSealer.ts";
import type { TransactionSigner } from "./chain/transactionSigner.ts";
import { WalletStore } from "./chain/walletStore.ts";
import { migrate } from "./db/migrate.ts";
import { createPool } from "./db/pool.ts";
import { developmentSecret } from "./developmentSecrets.ts";
import type { Metrics } from "./observability/metrics.ts";
import { IndexProgress } from "./reads/indexProgress.ts";
import { mayDeriveEvents } from "./events/deriveEvents.ts";
import { enqueueJob, JOB_NAMES } from "./jobs/jobQueue.ts";
import { loadDeployment } from "./chain/deployment.ts";
import type { DomainContext } from "./domain/context.ts";
import { WorkflowStore } from "./stores/workflowStore.ts";
import { createDocumentStore } from "./storage/index.ts";
import { ChainHead } from "./chain/chainHead.ts";

export interface CoreServices {
  pool: pg.Pool;
  provider: JsonRpcProvider;
  vault: KeyVault;
  wallets: WalletStore;
  /** Signs for the wallets: the key vault (SIGNER=local) or the remote signer (SIGNER=remote). */
  signer: TransactionSigner;
  index: IndexProgress;
  gateway: ChainGateway;
  close(): Promise<void>;
}

export async function masterKeyOf(config: Config): Promise<string> {
  return config.masterKey ?? (await developmentSecret(config.dataDir, "master.key"));
}

export function createProvider(config: Config): JsonRpcProvider {
  // An exchange with the node that takes longer than this counts as unreachable (ethers' default is 5 minutes).
  const connection = new FetchRequest(config.chainRpcUrl!);
  connection.timeout = 30_000;
  // cacheTimeout -1: ethers' 250 ms call cache makes back-to-back reads stale (see the toolchain notes).
  return new JsonRpcProvider(connection, config.chainId, {
    staticNetwork: true,
    cacheTimeout: -1,
    batchStallTime: 2,
  });
}

/** SIGNER=remote: keys in the remote signer (REMOTE_SIGNER_URL); otherwise the embedded key vault. */
export function createSigner(config: Config, wallets: WalletStore): TransactionSigner {
  const signer =
    config.signer !== "remote"
      ? new LocalVaultSigner(wallets)
      : new RemoteSigner({
          url: config.remoteSignerUrl!,
          authorization: config.remoteSignerAuth,
          timeoutMs: config.remoteSignerTimeoutMs,
          wallets,
        });
  return config.governancePrivateKey ? withGovernanceKey(signer, config.governancePrivateKey) : signer;
}

/**
 * The core services of a long-running process (the API, the worker): the audit table's append-only triggers must
 * bind this process's database role, so one that could rewrite the trail is refused in production (a warning
 * elsewhere).
 */
export async function createProcessServices(config: Config, logger: Logger, metrics?: Metrics): Promise<CoreServices> {
  const core = await createCoreServices(config, logger, metrics);
  try {
    await assertAuditTableRights(core.pool, {
      schema: config.apiSchema,
      production: config.nodeEnv === "production",
      logger,
    });
  } catch (error) {
    await core.close().catch(() => {});
    throw error;
  }
  return core;
}

export async function createCoreServices(config: Config, logger: Logger, metrics?: Metrics): Promise<CoreServices> {
  // Whatever process builds the services (API, worker, tools) refuses what the API refuses, before generating anything.
  assertConfiguredSecrets(config);
  if (!config.databaseUrl) throw new Error("DATABASE_URL is not set");
  if (!config.chainRpcUrl) throw new Error("CHAIN_RPC_URL is not set");
  const pool = createPool(config.databaseUrl, config.apiSchema, config.dbPoolSize);
  await migrate(pool, config.apiSchema);
  const provider = createProvider(config);
  const vault = new KeyVault(await masterKeyOf(config));
  // Embedded anvil: new custodial wallets get 1000 ETH for gas. Besu with free gas: nothing to fund.
  const fund =
    config.chainFunding === "anvil"
      ? async (address: string) => void (await provider.send("anvil_setBalance", [address, "0x3635c9adc5dea00000"]))
      : undefined;
  const chainNonce = async (address: string) => BigInt(await provider.getTransactionCount(address, "pending"));
  const wallets = new WalletStore(pool, vault, fund, chainNonce);
  const signer = createSigner(config, wallets);
  // The indexer's notifications wake writes waiting for their block.
  const index = new IndexProgress(pool, () => new pg.Client({ connectionString: config.databaseUrl }));
  await index.start();
  const gateway = new ChainGateway({
    pool,
    provider,
    wallets,
    signer,
    index,
    chainId: config.chainId,
    gasMode: config.chainGasMode,
    receiptTimeoutMs: config.receiptTimeoutMs,
    readYourWritesTimeoutMs: config.readYourWritesTimeoutMs,
    logger,
    onStatus: (status, kind) => metrics?.outboxTransitions.inc({ status, kind }),
    // A confirmed request transaction gets its events derived by a job enqueued in the same database transaction
    // (unless its receipt has none of the events any platform event follows from).
    onConfirmed: async (client, tx) => {
      if (tx.requestId && mayDeriveEvents(tx.receipt.logs))
        await enqueueJob(client, JOB_NAMES.deriveEvents, tx.id, { txId: tx.id });
    },
    // A document anchoring that reverted on chain leaves a stored file nobody can see: a job deletes it.
    onFailed: async (client, tx) => {
      if (tx.kind === "DOC_UPDATE") await enqueueJob(client, JOB_NAMES.discardFiles, tx.id, { txId: tx.id });
    },
  });
  return {
    pool,
    provider,
    vault,
    wallets,
    signer,
    index,
    gateway,
    async close() {
      await gateway.stop();
      await index.stop();
      provider.destroy();
      await pool.end();
    },
  };
}

/**
 * What use cases need, for the API and the worker: reconciles the outbox once (in the background on failure) and
 * keeps reconciling, then finds the operator wallet.
 */
export async function createDomainContext(config: Config, logger: Logger, core: CoreServices): Promise<DomainContext> {
  const deployment = await loadDeployment(config);
  // Reconcile before serving, but for 10 s at most: a large outbox of transactions that will never be mined must not
  // keep a new API or worker from starting (the rest continues in the background, as the loop does).
  const reconciled = core.gateway.reconcile().then(
    () => true,
    (error) => {
      logger.error({ err: error }, "start-up reconciliation failed; retrying in the background");
      return true;
    },
  );
  if (
    !(await Promise.race([reconciled, new Promise<boolean>((resolve) => setTimeout(resolve, 10_000, false).unref())]))
  ) {
    logger.warn("start-up reconciliation still running after 10 s; serving meanwhile");
  }
  core.gateway.startReconcileLoop(config.reconcileIntervalMs);
  const operator = await operatorWallet(config, core);
  if (!operator)
    throw new Error("No operator wallet: start the stack with npm start (or set OPERATOR_PRIVATE_KEY on first start)");
  const administrator = await administratorWallet(config, core);
  if (!administrator)
    throw new Error(
      "No administration wallet: start the stack with npm start (or set ADMIN_WALLET_PRIVATE_KEY on first start, or ADMIN_WALLET_ADDRESS with SIGNER=remote)",
    );
  // Without a governance key (a Safe governs), department and workflow changes are handed to governance (202).
  const governance = config.governancePrivateKey
    ? governanceKey(core.wallets, await governanceWallet(core.wallets, config.governancePrivateKey))
    : undefined;
  return {
    config,
    pool: core.pool,
    gateway: core.gateway,
    operator,
    administrator,
    governance,
    contracts: deployment.contracts,
    workflows: new WorkflowStore(core.pool),
    documentStore: await createDocumentStore(config),
    logger,
    applicantAddress: applicantAddresses(
      config.custodySecret ?? (await developmentSecret(config.dataDir, "custody.key")),
    ),
    departmentWallets: departmentWallets(core.signer),
    departmentSecrets: secretSealer(core.vault, "department-api-secret"),
    webhookSecrets: secretSealer(core.vault, "webhook-secret"),
    credentialSigner: await loadCredentialKey(core.pool, core.vault),
    chainState: chainStateKey(core),
  };
}

/** The chain's head and the index's generation together: unchanged, so is every read made of them. */
function chainStateKey(core: Pick<CoreServices, "provider" | "index">): () => Promise<string | undefined> {
  const head = new ChainHead(core.provider);
  return async () => {
    const generation = core.index.generation();
    return generation === undefined ? undefined : `${await head.current()}:${generation}`;
  };
}

/**
 * The operator wallet: with a remote signer, OPERATOR_ADDRESS (refused unless the signer holds its key; recorded
 * for nonce sequencing on first start); with the key vault, the one npm start created or imported.
 */
export async function operatorWallet(
  config: Config,
  core: Pick<CoreServices, "wallets" | "signer">,
): Promise<string | undefined> {
  if (config.signer === "remote") {
    return core.signer.ensureKey("OPERATOR", null, { address: config.operatorAddress }).catch((error: Error) => {
      throw new Error(`OPERATOR_ADDRESS ${config.operatorAddress} cannot be the operator wallet: ${error.message}`, {
        cause: error,
      });
    });
  }
  return core.wallets.findByPurpose("OPERATOR");
}

/** The administration wallet (ADMIN_ROLE), found like the operator's: ADMIN_WALLET_ADDRESS with a remote signer. */
export async function administratorWallet(
  config: Config,
  core: Pick<CoreServices, "wallets" | "signer">,
): Promise<string | undefined> {
  if (config.signer === "remote" && config.adminWalletAddress) {
    return core.signer.ensureKey("ADMIN", null, { address: config.adminWalletAddress }).catch((error: Error) => {
      throw new Error(
        `ADMIN_WALLET_ADDRESS ${config.adminWalletAddress} cannot be the administration wallet: ${error.message}`,
        { cause: error },
      );
    });
  }
  return core.wallets.findByPurpose("ADMIN");
}
