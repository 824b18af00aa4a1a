/**
 * Typed configuration: every setting has a doc, a default and an environment variable, and is checked at start-up
 * with a message naming the bad variable. `scripts/writeEnvExample.ts` turns this table into .env.example.
 */
import os from "node:os";
import path from "node:path";

export type Environment = "development" | "production" | "test";

interface Setting<T> {
  env: string;
  doc: string;
  /** Default, or undefined when the setting is optional (or required: see `required`). */
  fallback?: T | ((env: NodeJS.ProcessEnv) => T | undefined);
  parse: (raw: string, env: string) => T;
  /** Secret values are never printed or logged. */
  secret?: boolean;
}

class ConfigError extends Error {}

/**
 * The embedded development chain's deployer (anvil's first development account, whose key every anvil prints):
 * scripts/deploy.ts leaves DEFAULT_ADMIN_ROLE with it there, so npm start hands it to the API as the governance key
 * on chain 31337, and only there. Public: production refuses it.
 */
export const DEVELOPMENT_GOVERNANCE_KEY = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
export const DEVELOPMENT_CHAIN_ID = 31337;

const text = (raw: string) => raw;
const integer = (min: number, max: number) => (raw: string, env: string) => {
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${env} must be an integer between ${min} and ${max} (got "${raw}")`);
  }
  return value;
};
const oneOf =
  <T extends string>(...values: T[]) =>
  (raw: string, env: string) => {
    if (!values.includes(raw as T)) throw new ConfigError(`${env} must be one of ${values.join(", ")} (got "${raw}")`);
    return raw as T;
  };
const url = (raw: string, env: string) => {
  try {
    new URL(raw);
  } catch {
    throw new ConfigError(`${env} must be a URL (got "${raw}")`);
  }
  return raw.replace(/\/$/, "");
};
const hexKey = (bytes: number) => (raw: string, env: string) => {
  const hex = raw.replace(/^0x/, "");
  if (!new RegExp(`^[0-9a-fA-F]{${bytes * 2}}$`).test(hex))
    throw new ConfigError(`${env} must be ${bytes} bytes of hex`);
  return `0x${hex.toLowerCase()}`;
};
const address = (raw: string, env: string) => {
  if (!/^0x[0-9a-fA-F]{40}$/.test(raw)) throw new ConfigError(`${env} must be a 0x-prefixed 20-byte address`);
  return raw;
};
const fraction = (raw: string, env: string) => {
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0 || value > 1)
    throw new ConfigError(`${env} must be a number in (0, 1] (got "${raw}")`);
  return value;
};
const list = (raw: string) =>
  raw
    .split(",")
    .map((v) => v.trim())
    .filter(Boolean);
const bool = (raw: string, env: string) => {
  if (raw === "true" || raw === "1") return true;
  if (raw === "false" || raw === "0") return false;
  throw new ConfigError(`${env} must be true or false (got "${raw}")`);
};

export const settings = {
  nodeEnv: {
    env: "NODE_ENV",
    doc: "development, production or test; production refuses development conveniences",
    fallback: "development",
    parse: oneOf<Environment>("development", "production", "test"),
  },
  devConveniences: {
    env: "DEV_CONVENIENCES",
    doc: "true: a local development stack: the passwordless development identity provider and secrets generated under DATA_DIR/secrets (npm start turns it on and says so). Refused in production, with a HOST or PUBLIC_BASE_URL that is not loopback, behind a proxy (TRUST_PROXY_HOPS above 0), with an identity provider configured (IDENTITY_PROVIDER_*), and with a DATABASE_URL or CHAIN_RPC_URL on another host",
    fallback: false,
    parse: bool,
  },
  dataDir: {
    env: "DATA_DIR",
    doc: "Directory holding embedded Postgres, chain state, keys and files",
    fallback: "./.data",
    parse: (raw: string) => path.resolve(raw),
  },
  host: { env: "HOST", doc: "Interface the API binds to", fallback: "127.0.0.1", parse: text },
  port: { env: "PORT", doc: "API port", fallback: 3000, parse: integer(0, 65535) },
  publicBaseUrl: {
    env: "PUBLIC_BASE_URL",
    doc: "URL clients reach the API at (links, QR codes, token issuer); https and required in production; default http://HOST:PORT",
    parse: url,
  },
  logLevel: {
    env: "LOG_LEVEL",
    doc: "pino log level",
    fallback: "info",
    parse: oneOf("fatal", "error", "warn", "info", "debug", "trace", "silent"),
  },

  databaseUrl: {
    env: "DATABASE_URL",
    doc: "Postgres URL; unset: embedded Postgres under DATA_DIR",
    parse: text,
    secret: true,
  },
  embeddedPostgresPort: {
    env: "EMBEDDED_PG_PORT",
    doc: "Port of the embedded Postgres",
    fallback: 54329,
    parse: integer(1, 65535),
  },
  apiSchema: { env: "API_DB_SCHEMA", doc: "Postgres schema of the API's own tables", fallback: "app", parse: text },

  chainRpcUrl: {
    env: "CHAIN_RPC_URL",
    doc: "JSON-RPC URL of the chain (e.g. Besu); unset: embedded local chain",
    parse: url,
  },
  chainWsUrl: {
    env: "CHAIN_WS_URL",
    doc: "WebSocket URL of the same chain (Besu: --rpc-ws-enabled): new blocks are announced instead of polled; unset: polling (the embedded chain sets it)",
    parse: (raw: string, env: string) => {
      if (!/^wss?:\/\//i.test(raw)) throw new ConfigError(`${env} must be a ws:// or wss:// URL (got "${raw}")`);
      return url(raw, env);
    },
  },
  chainId: {
    env: "CHAIN_ID",
    doc: "Chain id; required with CHAIN_RPC_URL",
    fallback: 31337,
    parse: integer(1, 2 ** 31),
  },
  chainPort: { env: "CHAIN_PORT", doc: "Port of the embedded local chain", fallback: 8545, parse: integer(1, 65535) },
  chainGasMode: {
    env: "CHAIN_GAS_MODE",
    doc: "market: EIP-1559 fees from the node; free: gas price 0 (Besu with zeroBaseFee)",
    fallback: "market",
    parse: oneOf("market", "free"),
  },
  chainFunding: {
    env: "CHAIN_FUNDING",
    doc: "none, or anvil: fund new custodial wallets with anvil_setBalance (embedded chain only)",
    fallback: "none",
    parse: oneOf("none", "anvil"),
  },
  chainSnapshotMs: {
    env: "CHAIN_SNAPSHOT_MS",
    doc: "Embedded chain: how often (ms) it is checked for new blocks, saved when it has some",
    fallback: 250,
    parse: integer(50, 3_600_000),
  },
  deploymentFile: {
    env: "DEPLOYMENT_FILE",
    doc: "Deployment file (chain id, addresses, start block); default DATA_DIR/deployment.json",
    parse: text,
  },
  operatorPrivateKey: {
    env: "OPERATOR_PRIVATE_KEY",
    doc: "External chain: the operator wallet's key (stored encrypted at first start); embedded: generated",
    parse: hexKey(32),
    secret: true,
  },
  walletDelaySeconds: {
    env: "WALLET_DELAY_SECONDS",
    doc: "Embedded deployment: seconds a department wallet change waits in public before it can take effect (deploy script: at least 86,400 outside the embedded chain)",
    fallback: 60,
    parse: integer(1, 31_536_000),
  },
  adminWalletPrivateKey: {
    env: "ADMIN_WALLET_PRIVATE_KEY",
    doc: "External chain: the administration wallet's key (ADMIN_ROLE: department activation, escalations, suspensions; never the operator's); embedded: generated",
    parse: hexKey(32),
    secret: true,
  },
  governancePrivateKey: {
    env: "GOVERNANCE_PRIVATE_KEY",
    doc: "The governance key (DEFAULT_ADMIN_ROLE: registers departments, their wallet changes and workflow versions) when a single key governs; npm start sets the development chain's deployer key on chain 31337 only. Unset: those routes answer 202 AWAITING_GOVERNANCE with the transaction for governance (a Safe) to execute",
    parse: hexKey(32),
    secret: true,
  },
  deployerPrivateKey: {
    env: "DEPLOYER_PRIVATE_KEY",
    doc: "External chain: key that deploys when the deployment file is missing",
    parse: hexKey(32),
    secret: true,
  },
  signer: {
    env: "SIGNER",
    doc: "Who holds the wallets' keys: local (the encrypted key vault, under MASTER_KEY) or remote (a JSON-RPC signer: Web3Signer, EthSigner, Clef)",
    fallback: "local",
    parse: oneOf("local", "remote"),
  },
  remoteSignerUrl: {
    env: "REMOTE_SIGNER_URL",
    doc: "SIGNER=remote: the signer's JSON-RPC URL (eth_accounts, eth_signTransaction)",
    parse: url,
  },
  remoteSignerAuth: {
    env: "REMOTE_SIGNER_AUTH",
    doc: "SIGNER=remote: Authorization header sent to the signer, e.g. Bearer TOKEN or Basic BASE64",
    parse: text,
    secret: true,
  },
  remoteSignerTimeoutMs: {
    env: "REMOTE_SIGNER_TIMEOUT_MS",
    doc: "SIGNER=remote: how long one signing call may take (ms)",
    fallback: 10_000,
    parse: integer(100, 120_000),
  },
  operatorAddress: {
    env: "OPERATOR_ADDRESS",
    doc: "SIGNER=remote: the operator wallet, a key of the remote signer (holds the operator's roles)",
    parse: address,
  },
  adminWalletAddress: {
    env: "ADMIN_WALLET_ADDRESS",
    doc: "SIGNER=remote: the administration wallet (ADMIN_ROLE), another key of the remote signer than the operator's",
    parse: address,
  },
  masterKey: {
    env: "MASTER_KEY",
    doc: "32-byte hex key encrypting wallet keys at rest (AES-256-GCM); embedded: generated under DATA_DIR",
    parse: hexKey(32),
    secret: true,
  },
  licenceTokenAddress: {
    env: "LICENCE_TOKEN_ADDRESS",
    doc: "LicenceToken address, instead of the deployment file",
    parse: address,
  },
  documentRegistryAddress: {
    env: "DOCUMENT_REGISTRY_ADDRESS",
    doc: "DocumentRegistry address, instead of the deployment file",
    parse: address,
  },
  approvalRegistryAddress: {
    env: "APPROVAL_REGISTRY_ADDRESS",
    doc: "ApprovalRegistry address, instead of the deployment file",
    parse: address,
  },
  deploymentStartBlock: {
    env: "DEPLOYMENT_START_BLOCK",
    doc: "Block the contracts were deployed at, with the address variables",
    fallback: 0,
    parse: integer(0, Number.MAX_SAFE_INTEGER),
  },
  receiptTimeoutMs: {
    env: "TX_RECEIPT_TIMEOUT_MS",
    doc: "How long a write waits for its transaction to be mined",
    fallback: 30_000,
    parse: integer(100, 600_000),
  },
  reconcileIntervalMs: {
    env: "OUTBOX_RECONCILE_MS",
    doc: "How often pending transactions are re-checked and re-broadcast",
    fallback: 2_000,
    parse: integer(100, 600_000),
  },

  indexerPort: {
    env: "INDEXER_PORT",
    doc: "Port of the Ponder indexer's HTTP server",
    fallback: 42069,
    parse: integer(1, 65535),
  },
  indexerHost: {
    env: "INDEXER_HOST",
    doc: "npm run indexer: address the indexer listens on (another host's API reaches it through INDEXER_URL)",
    fallback: "127.0.0.1",
    parse: text,
  },
  indexerUrl: {
    env: "INDEXER_URL",
    doc: "URL of the Ponder indexer; default http://127.0.0.1:INDEXER_PORT",
    parse: url,
  },
  indexerPollingMs: {
    env: "INDEXER_POLLING_MS",
    doc: "Indexer polling interval (ms, min 100)",
    fallback: 100,
    parse: integer(100, 60_000),
  },
  readYourWritesTimeoutMs: {
    env: "READ_YOUR_WRITES_TIMEOUT_MS",
    doc: "How long a write waits for the indexer to reach its block",
    fallback: 5_000,
    parse: integer(0, 600_000),
  },
  healthMaxIndexerLag: {
    env: "HEALTH_MAX_INDEXER_LAG",
    doc: "Blocks the indexer may trail the chain head while /health says ok",
    fallback: 5,
    parse: integer(0, 1_000_000),
  },

  // Authentication (api/src/auth)
  jwtPrivateKey: {
    env: "JWT_PRIVATE_KEY",
    doc: "PKCS#8 PEM of the ES256 key signing service tokens; embedded: generated under DATA_DIR",
    parse: text,
    secret: true,
  },
  jwtIssuer: { env: "JWT_ISSUER", doc: "iss of service tokens; default PUBLIC_BASE_URL", parse: text },
  jwtAudience: { env: "JWT_AUDIENCE", doc: "aud of service tokens", fallback: "licence-approval-api", parse: text },
  accessTokenTtlSeconds: {
    env: "ACCESS_TOKEN_TTL_SECONDS",
    doc: "Lifetime of access tokens (seconds)",
    fallback: 3600,
    parse: integer(1, 86_400),
  },
  adminClientId: {
    env: "ADMIN_CLIENT_ID",
    doc: "Bootstrap admin client id; embedded: generated and printed by npm start",
    parse: text,
  },
  adminClientSecret: {
    env: "ADMIN_CLIENT_SECRET",
    doc: "Bootstrap admin client secret, at least 32 characters and about 128 bits by estimate (e.g. openssl rand -hex 32; weak ones are refused without DEV_CONVENIENCES); embedded: generated and printed by npm start",
    parse: text,
    secret: true,
  },
  identityProviderAuthorizeUrl: {
    env: "IDENTITY_PROVIDER_AUTHORIZE_URL",
    doc: "Identity locker (OAuth 2.0 / OIDC) authorize URL; unset: built-in development provider (refused in production)",
    parse: url,
  },
  identityProviderTokenUrl: { env: "IDENTITY_PROVIDER_TOKEN_URL", doc: "Identity locker token URL", parse: url },
  identityProviderUserinfoUrl: {
    env: "IDENTITY_PROVIDER_USERINFO_URL",
    doc: "Identity locker userinfo URL (sub, name, email)",
    parse: url,
  },
  identityProviderClientId: {
    env: "IDENTITY_PROVIDER_CLIENT_ID",
    doc: "Our client id at the identity locker",
    parse: text,
  },
  identityProviderClientSecret: {
    env: "IDENTITY_PROVIDER_CLIENT_SECRET",
    doc: "Our client secret at the identity locker",
    parse: text,
    secret: true,
  },
  redirectUriAllowlist: {
    env: "REDIRECT_URI_ALLOWLIST",
    doc: "Registered applicant clients and their redirect URIs, comma-separated `client_id=uri` (or `uri`: client_id is its origin); matched exactly (with DEV_CONVENIENCES any loopback http URI is accepted)",
    fallback: [] as string[],
    parse: list,
  },
  issuerPrivateKey: {
    env: "ISSUER_PRIVATE_KEY",
    doc: "secp256k1 key signing licences' QR codes (EIP-191); embedded: generated under DATA_DIR",
    parse: hexKey(32),
    secret: true,
  },
  custodySecret: {
    env: "CUSTODY_SECRET",
    doc: "32-byte hex secret deriving applicants' custodial addresses; embedded: generated under DATA_DIR",
    parse: hexKey(32),
    secret: true,
  },

  // Document storage (api/src/storage)
  storageBackend: {
    env: "STORAGE_BACKEND",
    doc: "local (files under DATA_DIR/files) or s3",
    fallback: "local",
    parse: oneOf("local", "s3"),
  },
  s3Endpoint: { env: "S3_ENDPOINT", doc: "S3 endpoint URL (unset: AWS default for the region)", parse: url },
  s3Region: { env: "S3_REGION", doc: "S3 region", fallback: "us-east-1", parse: text },
  s3Bucket: { env: "S3_BUCKET", doc: "S3 bucket for documents", fallback: "licence-documents", parse: text },
  s3AccessKeyId: { env: "S3_ACCESS_KEY_ID", doc: "S3 access key id", parse: text },
  s3SecretAccessKey: { env: "S3_SECRET_ACCESS_KEY", doc: "S3 secret access key", parse: text, secret: true },
  s3ForcePathStyle: {
    env: "S3_FORCE_PATH_STYLE",
    doc: "Path-style S3 URLs (most S3-compatible servers need it)",
    fallback: true,
    parse: bool,
  },
  fileUrlSecret: {
    env: "FILE_URL_SECRET",
    doc: "32-byte hex key signing local download URLs; embedded: generated under DATA_DIR",
    parse: hexKey(32),
    secret: true,
  },
  refuseActivePdf: {
    env: "REFUSE_ACTIVE_PDF",
    doc: "true: refuse PDFs carrying JavaScript, launch actions, embedded files, XFA, open or additional actions, links, form submission or rich media (400 INVALID_FILE, reason ACTIVE_CONTENT); false: accept them flagged in the document detail. Default: true in production, false elsewhere. PDFs the scanner cannot judge are refused either way (reason UNSCANNABLE)",
    fallback: (env: NodeJS.ProcessEnv) => env.NODE_ENV === "production",
    parse: bool,
  },
  maxUploadBytes: {
    env: "MAX_UPLOAD_BYTES",
    doc: "Largest accepted document (bytes); larger uploads get 413",
    fallback: 10 * 1024 * 1024,
    parse: integer(1, 1024 * 1024 * 1024),
  },

  licenceValidityDays: {
    env: "LICENCE_VALIDITY_DAYS",
    doc: "Lifetime of an issued licence per request type, TYPE=days comma-separated (0: never expires)",
    fallback: { RESORT_LICENSE: 365, TRADE_LICENSE: 365, BUILDING_PERMIT: 730 } as Record<string, number>,
    parse: (raw: string, env: string) => {
      const map: Record<string, number> = { RESORT_LICENSE: 365, TRADE_LICENSE: 365, BUILDING_PERMIT: 730 };
      for (const pair of list(raw)) {
        const [type, days] = pair.split("=");
        if (!type || !/^\d+$/.test(days ?? ""))
          throw new ConfigError(`${env} must look like RESORT_LICENSE=365,BUILDING_PERMIT=730`);
        map[type] = Number(days);
      }
      return map;
    },
  },
  rateLimitAuthPerMinute: {
    env: "RATE_LIMIT_AUTH_PER_MINUTE",
    doc: "Failed authentications (a wrong client secret, API key or token) per minute per credential and address, and per address; the sign-in endpoints (/auth/*) take five times as many requests per address; 0: no limit",
    fallback: 60,
    parse: integer(0, 1_000_000),
  },
  rateLimitWritePerMinute: {
    env: "RATE_LIMIT_WRITE_PER_MINUTE",
    doc: "Write requests (POST/PUT/PATCH/DELETE) per caller per minute; 0: no limit",
    fallback: 600,
    parse: integer(0, 1_000_000),
  },
  rateLimitReadPerMinute: {
    env: "RATE_LIMIT_READ_PER_MINUTE",
    doc: "Authenticated reads (GET) per caller (applicant, client or department) per minute; 0: no limit",
    fallback: 600,
    parse: integer(0, 1_000_000),
  },
  rateLimitPublicPerMinute: {
    env: "RATE_LIMIT_PUBLIC_PER_MINUTE",
    doc: "Public reads (/verify*, /health) per client address (IPv6: per /64) per minute; 0: no limit",
    fallback: 120,
    parse: integer(0, 1_000_000),
  },
  requestQuotaPerDay: {
    env: "REQUEST_QUOTA_PER_DAY",
    doc: "Requests one applicant may create in any 24 hours (each mints through the shared operator wallet); beyond: 429 QUOTA_EXCEEDED; 0: no quota",
    fallback: 50,
    parse: integer(0, 1_000_000),
  },
  documentVersionsPerDocument: {
    env: "DOCUMENT_VERSIONS_PER_DOCUMENT",
    doc: "Versions one document may have (the first upload is version 1); beyond: 409 DOCUMENT_BUDGET_EXCEEDED; 0: only the contract's 32,767",
    fallback: 20,
    parse: integer(0, 32_767),
  },
  documentVersionsPerDay: {
    env: "DOCUMENT_VERSIONS_PER_DAY",
    doc: "Document versions (first uploads and new versions) uploaded to one applicant's requests in any 24 hours, each anchored through the shared operator wallet; beyond: 429 DOCUMENT_BUDGET_EXCEEDED; 0: no budget",
    fallback: 200,
    parse: integer(0, 1_000_000),
  },
  documentBytesPerDay: {
    env: "DOCUMENT_BYTES_PER_DAY",
    doc: "Bytes of document versions uploaded to one applicant's requests in any 24 hours; beyond: 429 DOCUMENT_BUDGET_EXCEEDED; 0: no budget",
    fallback: 500 * 1024 * 1024,
    parse: integer(0, Number.MAX_SAFE_INTEGER),
  },
  maxMetadataBytes: {
    env: "MAX_METADATA_BYTES",
    doc: "Largest request metadata, serialized JSON bytes; beyond: 400 METADATA_TOO_LARGE",
    fallback: 16 * 1024,
    parse: integer(256, 1024 * 1024),
  },
  headersTimeoutMs: {
    env: "HEADERS_TIMEOUT_MS",
    doc: "Time a client has to send a request's headers before it is answered 408 and disconnected",
    fallback: 20_000,
    parse: integer(1_000, 600_000),
  },
  requestTimeoutMs: {
    env: "REQUEST_TIMEOUT_MS",
    doc: "Time a client has to send a whole request, body included (a 10 MB upload on a slow link), before 408",
    fallback: 120_000,
    parse: integer(1_000, 3_600_000),
  },
  metricsToken: {
    env: "METRICS_TOKEN",
    doc: "When set, /metrics answers only `Authorization: Bearer <METRICS_TOKEN>` (unset: public, rate-limited like /health; required in production)",
    parse: text,
    secret: true,
  },
  trustProxyHops: {
    env: "TRUST_PROXY_HOPS",
    doc: "Reverse proxies in front of the API that append to X-Forwarded-For; the client address (rate limits, audit rows) is the one the outermost trusted proxy saw; 0: the socket address",
    fallback: 0,
    parse: integer(0, 10),
  },

  // Jobs (api/src/jobs): webhooks, event derivation, stage timeouts
  jobsInApi: {
    env: "JOBS_IN_API",
    doc: "Run the job runner inside the API process (false when `npm run worker` runs it)",
    fallback: true,
    parse: bool,
  },
  jobPollMs: {
    env: "JOB_POLL_MS",
    doc: "How often the job runner looks for due jobs (ms); new jobs also wake it at once",
    fallback: 1_000,
    parse: integer(50, 60_000),
  },
  jobConcurrency: {
    env: "JOB_CONCURRENCY",
    doc: "Jobs of one kind a runner works on at once",
    fallback: 10,
    parse: integer(1, 1_000),
  },
  jobLockMs: {
    env: "JOB_LOCK_MS",
    doc: "A job whose runner died is taken over after this long (ms; deliveries: at least 15 s, above their 10 s timeout)",
    fallback: 60_000,
    parse: integer(1_000, 3_600_000),
  },
  jobTimeScale: {
    env: "JOB_TIME_SCALE",
    doc: "Tests only: multiplies the webhook retry delays (1 min … 24 h) so the schedule runs in seconds; 1 in production",
    fallback: 1,
    parse: fraction,
  },
  // Processes (npm start) and their share of Postgres
  apiProcesses: {
    env: "API_PROCESSES",
    doc: "npm start: API processes sharing PORT (reusePort); default one per core",
    fallback: () => os.availableParallelism(),
    parse: integer(1, 64),
  },
  workerProcesses: {
    env: "WORKER_PROCESSES",
    doc: "npm start: job-runner processes; when above 0 the APIs run no jobs unless JOBS_IN_API is set",
    fallback: 0,
    parse: integer(0, 64),
  },
  dbPoolSize: {
    env: "DB_POOL_SIZE",
    doc: "Postgres connections per API or worker process (all processes together must stay under the server's max_connections)",
    fallback: 20,
    parse: integer(1, 1_000),
  },
  startIndexer: {
    env: "START_INDEXER",
    doc: "npm start: run the indexer (false when it runs elsewhere)",
    fallback: true,
    parse: bool,
  },
} satisfies Record<string, Setting<unknown>>;

type Settings = typeof settings;
type ValueOf<K extends keyof Settings> = ReturnType<Settings[K]["parse"]>;
export type Config = {
  [K in keyof Settings]: Settings[K] extends { fallback: unknown } ? ValueOf<K> : ValueOf<K> | undefined;
};

/**
 * Reads a `.env` file into process.env (ENV_FILE, default ./.env), when there is one: variables already set win.
 * Every role's command (npm start, npm run api, npm run worker) calls it first, so one file configures a host.
 */
export function readEnvFile(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const file = path.resolve(env.ENV_FILE ?? ".env");
  try {
    process.loadEnvFile(file);
    return file;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new ConfigError(`ENV_FILE ${file}: ${(error as Error).message}`);
  }
}

/** One error listing every problem found, if any. */
function failOn(problems: string[]): void {
  if (problems.length > 0) throw new Error(`Invalid configuration:\n  - ${problems.join("\n  - ")}`);
}

/** Reads and checks `keys`' settings, adding a problem per bad variable. */
function readSettings(keys: readonly string[], env: NodeJS.ProcessEnv, problems: string[]): Record<string, unknown> {
  const config: Record<string, unknown> = {};
  for (const key of keys) {
    const setting = (settings as Record<string, Setting<unknown>>)[key];
    const raw = env[setting.env];
    try {
      if (raw !== undefined && raw !== "") config[key] = setting.parse(raw, setting.env);
      else if (typeof setting.fallback === "function")
        config[key] = (setting.fallback as (e: NodeJS.ProcessEnv) => unknown)(env);
      else config[key] = setting.fallback;
    } catch (error) {
      problems.push(error instanceof ConfigError ? error.message : `${setting.env}: ${(error as Error).message}`);
    }
  }
  return config;
}

/**
 * Reads and checks only the settings a process of another kind needs (the indexer: `npm run indexer`), none of the
 * API's rules; throws one error listing every bad variable.
 */
export function loadSettings<K extends keyof Settings>(
  keys: readonly K[],
  env: NodeJS.ProcessEnv = process.env,
): Pick<Config, K> {
  const problems: string[] = [];
  const values = readSettings(keys, env, problems);
  failOn(problems);
  return values as Pick<Config, K>;
}

/** Reads and checks every setting; throws one error listing every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const problems: string[] = [];
  const result = readSettings(Object.keys(settings), env, problems) as Config;
  if (env.CHAIN_RPC_URL && !env.CHAIN_ID) problems.push("CHAIN_ID is required with CHAIN_RPC_URL");
  // Retired setting: the API's SQL names the indexer's views as index.* (docs/decisions.md, "The index views schema").
  if (env.INDEX_VIEWS_SCHEMA && env.INDEX_VIEWS_SCHEMA !== "index") {
    problems.push(
      "INDEX_VIEWS_SCHEMA is no longer a setting: the indexer's views are always in schema index (one database per stack)",
    );
  }
  if (result.signer === "remote") {
    if (!result.remoteSignerUrl) problems.push("REMOTE_SIGNER_URL is required with SIGNER=remote");
    else if (!/^https?:\/\//.test(result.remoteSignerUrl))
      problems.push("REMOTE_SIGNER_URL must be an http or https URL");
    if (!result.operatorAddress)
      problems.push("OPERATOR_ADDRESS (a key of the remote signer) is required with SIGNER=remote");
    if (result.operatorPrivateKey)
      problems.push(
        "OPERATOR_PRIVATE_KEY cannot be set with SIGNER=remote: the operator key stays in the signer (set OPERATOR_ADDRESS)",
      );
  }
  if (result.devConveniences) problems.push(...devConveniencesProblems(result));
  if (result.nodeEnv === "production") {
    if (!result.publicBaseUrl?.startsWith("https://"))
      problems.push(
        "PUBLIC_BASE_URL is required in production and must be https (it is in every QR code, link and token issuer)",
      );
    if (!result.masterKey) problems.push("MASTER_KEY is required in production (no generated secrets)");
    if (!result.databaseUrl) problems.push("DATABASE_URL is required in production (no embedded Postgres)");
    if (!result.chainRpcUrl) problems.push("CHAIN_RPC_URL is required in production (no embedded chain)");
    if (!result.jwtPrivateKey) problems.push("JWT_PRIVATE_KEY is required in production (no generated signing key)");
    if (!result.adminClientId || !result.adminClientSecret)
      problems.push("ADMIN_CLIENT_ID and ADMIN_CLIENT_SECRET are required in production");
    else {
      const weakness = weakSecretProblem(result.adminClientSecret, result.adminClientId);
      if (weakness) problems.push(`ADMIN_CLIENT_SECRET is too weak for production: ${weakness}`);
    }
    if (!result.metricsToken)
      problems.push(
        "METRICS_TOKEN is required in production: /metrics (per-route traffic, outbox counts, indexer lag) is served only to its bearer",
      );
    if (!result.custodySecret) problems.push("CUSTODY_SECRET is required in production");
    if (!result.issuerPrivateKey)
      problems.push("ISSUER_PRIVATE_KEY is required in production (it signs the licences' QR codes)");
    if (!result.identityProviderAuthorizeUrl)
      problems.push(
        "IDENTITY_PROVIDER_AUTHORIZE_URL (and the other IDENTITY_PROVIDER_* settings) are required in production: the development identity provider is refused",
      );
    if (result.storageBackend === "local" && !result.fileUrlSecret)
      problems.push("FILE_URL_SECRET is required in production with local storage");
    if (result.jobTimeScale !== 1)
      problems.push("JOB_TIME_SCALE must be 1 in production (it shortens the webhook retry schedule)");
    if (result.governancePrivateKey === DEVELOPMENT_GOVERNANCE_KEY)
      problems.push(
        "GOVERNANCE_PRIVATE_KEY is the development chain's public deployer key: refused in production (leave it unset to have governance, e.g. a Safe, execute department and workflow changes)",
      );
  }
  failOn(problems);
  result.publicBaseUrl ??= `http://${result.host}:${result.port}`;
  result.indexerUrl ??= `http://127.0.0.1:${result.indexerPort}`;
  result.deploymentFile ??= path.join(result.dataDir, "deployment.json");
  result.jwtIssuer ??= result.publicBaseUrl;
  return result;
}

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "::1", "[::1]"]);
const isLoopbackHost = (host: string) => LOOPBACK_HOSTS.has(host.toLowerCase()) || /^127\./.test(host);
const hostOf = (raw: string) => {
  try {
    return new URL(raw).hostname;
  } catch {
    return raw;
  }
};

/**
 * Development conveniences are for a local stack only: never in production, never reachable from elsewhere, and
 * never next to a real database or chain (which a forgotten setting would otherwise open to passwordless sign-in).
 */
export function devConveniencesProblems(config: Config): string[] {
  const problems: string[] = [];
  const refused = "DEV_CONVENIENCES (passwordless development sign-in, generated secrets) is refused";
  if (config.nodeEnv === "production") problems.push(`${refused} in production`);
  if (!isLoopbackHost(config.host))
    problems.push(`${refused} with HOST=${config.host}: it only serves a local stack on a loopback address`);
  if (config.databaseUrl && !isLoopbackHost(hostOf(config.databaseUrl)))
    problems.push(`${refused} with a DATABASE_URL on another host`);
  if (config.chainRpcUrl && !isLoopbackHost(hostOf(config.chainRpcUrl)))
    problems.push(`${refused} with a CHAIN_RPC_URL on another host`);
  // A proxy on the same host forwards the world to a loopback HOST: the public URL and the proxy settings say so.
  if (config.publicBaseUrl && !isLoopbackHost(hostOf(config.publicBaseUrl)))
    problems.push(
      `${refused} with PUBLIC_BASE_URL=${redactedUrl(config.publicBaseUrl)}: clients reach the API through another address (a proxy)`,
    );
  if (config.trustProxyHops > 0)
    problems.push(`${refused} with TRUST_PROXY_HOPS=${config.trustProxyHops}: the API is behind a reverse proxy`);
  const provider = identityProviderSettings.filter((key) => config[key] !== undefined).map((key) => settings[key].env);
  if (provider.length > 0) problems.push(`${refused} with an identity provider configured (${provider.join(", ")})`);
  return problems;
}

const identityProviderSettings = [
  "identityProviderAuthorizeUrl",
  "identityProviderTokenUrl",
  "identityProviderUserinfoUrl",
  "identityProviderClientId",
  "identityProviderClientSecret",
] as const;

/** Fragments of well-known placeholder and guessable secrets. */
const WEAK_FRAGMENTS = ["password", "passwd", "changeme", "secret", "admin", "example", "letmein", "qwerty", "123456"];
/** Fewest characters, and fewest estimated bits, of a secret a person chose (ADMIN_CLIENT_SECRET). */
export const MIN_SECRET_LENGTH = 32;
export const MIN_SECRET_BITS = 128;

/**
 * Why a chosen secret is too weak, or undefined. The estimate is length × log2(size of the character classes used:
 * lower case, upper case, digits, others), after refusing what that estimate overrates: a repeated unit, runs
 * (abcd, 1234), few distinct characters, well-known words, and the client id itself. `openssl rand -hex 32` passes.
 */
export function weakSecretProblem(secret: string, clientId?: string): string | undefined {
  if (secret.length < MIN_SECRET_LENGTH)
    return `it has ${secret.length} characters, at least ${MIN_SECRET_LENGTH} are required (e.g. openssl rand -hex 32)`;
  const lower = secret.toLowerCase();
  const fragment = WEAK_FRAGMENTS.find((word) => lower.includes(word));
  if (fragment) return `it contains "${fragment}"`;
  if (clientId && lower.includes(clientId.toLowerCase())) return "it contains ADMIN_CLIENT_ID";
  for (let unit = 1; unit <= secret.length / 2; unit++)
    if (secret.length % unit === 0 && secret === secret.slice(0, unit).repeat(secret.length / unit))
      return "it repeats a shorter string";
  if (new Set(secret).size < 8) return "it uses fewer than 8 distinct characters";
  let steps = 0;
  for (let i = 1; i < secret.length; i++) if (Math.abs(secret.charCodeAt(i) - secret.charCodeAt(i - 1)) <= 1) steps++;
  if (steps >= secret.length / 2) return "it is made of runs of neighbouring or repeated characters (abcd, 1234, aaaa)";
  const pool =
    (/[a-z]/.test(secret) ? 26 : 0) +
    (/[A-Z]/.test(secret) ? 26 : 0) +
    (/[0-9]/.test(secret) ? 10 : 0) +
    (/[^a-zA-Z0-9]/.test(secret) ? 33 : 0);
  const bits = Math.floor(secret.length * Math.log2(pool));
  if (bits < MIN_SECRET_BITS)
    return `about ${bits} bits by estimate, at least ${MIN_SECRET_BITS} are required (use more characters, or more kinds of them)`;
  return undefined;
}

/**
 * For the API process (which would otherwise generate secrets and offer passwordless sign-in): without development
 * conveniences every secret and the identity provider must be configured. Fails closed whatever NODE_ENV says.
 */
export function assertConfiguredSecrets(config: Config): void {
  const problems = missingSecrets(config);
  // The development deployer's key is public: it governs nothing but the embedded development chain.
  if (config.governancePrivateKey === DEVELOPMENT_GOVERNANCE_KEY && config.chainId !== DEVELOPMENT_CHAIN_ID)
    problems.push(
      `GOVERNANCE_PRIVATE_KEY is the development chain's public deployer key: refused on chain ${config.chainId} (only ${DEVELOPMENT_CHAIN_ID})`,
    );
  failOn(problems);
}

function missingSecrets(config: Config): string[] {
  if (config.devConveniences) return [];
  const hint = "(or DEV_CONVENIENCES=true for a local development stack)";
  const problems: string[] = [];
  if (!config.masterKey) problems.push(`MASTER_KEY is required ${hint}`);
  if (!config.jwtPrivateKey) problems.push(`JWT_PRIVATE_KEY is required ${hint}`);
  if (!config.adminClientId || !config.adminClientSecret)
    problems.push(`ADMIN_CLIENT_ID and ADMIN_CLIENT_SECRET are required ${hint}`);
  else {
    const weakness = weakSecretProblem(config.adminClientSecret, config.adminClientId);
    if (weakness) problems.push(`ADMIN_CLIENT_SECRET is too weak: ${weakness} ${hint}`);
  }
  if (!config.custodySecret) problems.push(`CUSTODY_SECRET is required ${hint}`);
  if (!config.issuerPrivateKey) problems.push(`ISSUER_PRIVATE_KEY is required ${hint}`);
  if (config.storageBackend === "local" && !config.fileUrlSecret)
    problems.push(`FILE_URL_SECRET is required with local storage ${hint}`);
  if (!config.identityProviderAuthorizeUrl)
    problems.push(`IDENTITY_PROVIDER_* settings are required: the development identity provider is off ${hint}`);
  // In production the same facts are reported by the production checks below, with their own words.
  return config.nodeEnv === "production" ? [] : problems;
}

/** The variables a secret-free log line may show. */
export function describeConfig(config: Config): Record<string, unknown> {
  const shown: Record<string, unknown> = {};
  for (const [key, setting] of Object.entries(settings) as [keyof Config, Setting<unknown>][]) {
    if (!setting.secret) shown[setting.env] = redactedUrl(config[key]);
  }
  return shown;
}

/**
 * A URL as it may be printed (config dump, npm start's ready block): scheme, host and port. Its user and password,
 * and its path and query (where RPC and identity providers put API keys: `…/v3/<key>`, `?apikey=`), are replaced
 * by `***`. Anything that is not a URL is returned as it is.
 */
export function redactedUrl<T>(value: T): T | string {
  if (typeof value !== "string" || !/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) return value;
  try {
    const url = new URL(value);
    const credentials =
      url.username || url.password ? `${url.username ? "***" : ""}${url.password ? ":***" : ""}@` : "";
    const rest = (url.pathname !== "/" && url.pathname !== "") || url.search || url.hash ? "/***" : "";
    return `${url.protocol}//${credentials}${url.host}${rest}`;
  } catch {
    return "***";
  }
}
