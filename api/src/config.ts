/**
 * Typed configuration: one zod schema with an environment variable, a description and a default per setting. Parsing,
 * the `Config` type, the messages naming a bad variable and .env.example (`npm run env:example`) all come from it.
 */
import os from "node:os";
import path from "node:path";
import { z } from "zod/v4";

export type Environment = "development" | "production" | "test";

/**
 * The embedded development chain's deployer (anvil's first development account, whose key every anvil prints):
 * scripts/deploy.ts leaves DEFAULT_ADMIN_ROLE with it there, so npm start hands it to the API as the governance key
 * on chain 31337, and only there. Public: production refuses it.
 */
export const DEVELOPMENT_GOVERNANCE_KEY = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
export const DEVELOPMENT_CHAIN_ID = 31337;

/** A setting: its variable, what it does, and whether its value is secret (never printed or logged). */
const setting = <T extends z.ZodType>(env: string, description: string, schema: T) => schema.meta({ env, description });
const secret = <T extends z.ZodType>(env: string, description: string, schema: T) =>
  schema.meta({ env, description, secret: true });

// Each check's message completes "<VARIABLE> …"; a message per check so every failure reads the same.
const integer = (min: number, max: number) => {
  const error = `must be an integer between ${min} and ${max}`;
  return z.coerce.number({ error }).int({ error }).min(min, { error }).max(max, { error });
};
const fraction = z.coerce
  .number({ error: "must be a number in (0, 1]" })
  .gt(0, { error: "must be a number in (0, 1]" })
  .max(1, { error: "must be a number in (0, 1]" });
const oneOf = <const T extends readonly [string, ...string[]]>(...values: T) =>
  z.enum(values, { error: `must be one of ${values.join(", ")}` });
const url = z.url({ error: "must be a URL" }).transform((raw) => raw.replace(/\/$/, ""));
const hexKey = z
  .string()
  .regex(/^(0x)?[0-9a-fA-F]{64}$/, { error: "must be 32 bytes of hex" })
  .transform((raw) => `0x${raw.replace(/^0x/, "").toLowerCase()}`);
const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/, { error: "must be a 0x-prefixed 20-byte address" });
const bool = z.stringbool({
  truthy: ["true", "1"],
  falsy: ["false", "0"],
  case: "sensitive",
  error: "must be true or false",
});
const list = z.string().transform((raw) =>
  raw
    .split(",")
    .map((v) => v.trim())
    .filter(Boolean),
);
const LICENCE_VALIDITY_DAYS: Record<string, number> = { RESORT_LICENSE: 365, TRADE_LICENSE: 365, BUILDING_PERMIT: 730 };
const validityDays = list.transform((pairs, ctx) => {
  const map = { ...LICENCE_VALIDITY_DAYS };
  for (const [type, days] of pairs.map((pair) => pair.split("="))) {
    if (!type || !/^\d+$/.test(days ?? "")) {
      ctx.issues.push({
        code: "custom",
        input: pairs,
        message: "must look like RESORT_LICENSE=365,BUILDING_PERMIT=730",
      });
      return z.NEVER;
    }
    map[type] = Number(days);
  }
  return map;
});

const schema = z.object({
  nodeEnv: setting(
    "NODE_ENV",
    "development, production or test; production refuses development conveniences",
    oneOf("development", "production", "test").default("development"),
  ),
  devConveniences: setting(
    "DEV_CONVENIENCES",
    "true: a local development stack: the passwordless development identity provider and secrets generated under DATA_DIR/secrets (npm start turns it on and says so). Refused in production, with a HOST or PUBLIC_BASE_URL that is not loopback, behind a proxy (TRUST_PROXY_HOPS above 0), with an identity provider configured (IDENTITY_PROVIDER_*), and with a DATABASE_URL or CHAIN_RPC_URL on another host",
    bool.default(false),
  ),
  dataDir: setting(
    "DATA_DIR",
    "Directory holding embedded Postgres, chain state, keys and files",
    z
      .string()
      .transform((raw) => path.resolve(raw))
      .prefault("./.data"),
  ),
  host: setting("HOST", "Interface the API binds to", z.string().default("127.0.0.1")),
  port: setting("PORT", "API port", integer(0, 65535).default(3000)),
  publicBaseUrl: setting(
    "PUBLIC_BASE_URL",
    "URL clients reach the API at (links, QR codes, token issuer); https and required in production; default http://HOST:PORT",
    url.optional(),
  ),
  apiInstance: setting(
    "API_INSTANCE",
    "Name of this API process in every response's X-Api-Instance header (npm start names its processes)",
    z.string().optional(),
  ),
  logLevel: setting(
    "LOG_LEVEL",
    "pino log level",
    oneOf("fatal", "error", "warn", "info", "debug", "trace", "silent").default("info"),
  ),

  databaseUrl: secret("DATABASE_URL", "Postgres URL; unset: embedded Postgres under DATA_DIR", z.string().optional()),
  embeddedPostgresPort: setting("EMBEDDED_PG_PORT", "Port of the embedded Postgres", integer(1, 65535).default(54329)),
  apiSchema: setting(
    "API_DB_SCHEMA",
    "Postgres schema of the API's own tables (another schema: another platform in the same database)",
    z.string().default("app"),
  ),

  chainRpcUrl: setting(
    "CHAIN_RPC_URL",
    "JSON-RPC URL of the chain (e.g. Besu); unset: embedded local chain",
    url.optional(),
  ),
  chainWsUrl: setting(
    "CHAIN_WS_URL",
    "WebSocket URL of the same chain (Besu: --rpc-ws-enabled): new blocks are announced instead of polled; unset: polling (the embedded chain sets it)",
    z
      .url({ protocol: /^wss?$/, error: "must be a ws:// or wss:// URL" })
      .transform((raw) => raw.replace(/\/$/, ""))
      .optional(),
  ),
  chainId: setting("CHAIN_ID", "Chain id; required with CHAIN_RPC_URL", integer(1, 2 ** 31).default(31337)),
  chainPort: setting("CHAIN_PORT", "Port of the embedded local chain", integer(1, 65535).default(8545)),
  chainGasMode: setting(
    "CHAIN_GAS_MODE",
    "market: EIP-1559 fees from the node; free: gas price 0 (Besu with zeroBaseFee)",
    oneOf("market", "free").default("market"),
  ),
  chainFunding: setting(
    "CHAIN_FUNDING",
    "none, or anvil: fund new custodial wallets with anvil_setBalance (embedded chain only)",
    oneOf("none", "anvil").default("none"),
  ),
  deploymentFile: setting(
    "DEPLOYMENT_FILE",
    "Deployment file (chain id, addresses, start block); default DATA_DIR/deployment.json",
    z.string().optional(),
  ),
  operatorPrivateKey: secret(
    "OPERATOR_PRIVATE_KEY",
    "External chain: the operator wallet's key (stored encrypted at first start); embedded: generated",
    hexKey.optional(),
  ),
  walletDelaySeconds: setting(
    "WALLET_DELAY_SECONDS",
    "Embedded deployment: seconds a department wallet change waits in public before it can take effect (deploy script: at least 86,400 outside the embedded chain; tests shorten it to see a change take effect)",
    integer(1, 31_536_000).default(60),
  ),
  adminWalletPrivateKey: secret(
    "ADMIN_WALLET_PRIVATE_KEY",
    "External chain: the administration wallet's key (ADMIN_ROLE: department activation, escalations, suspensions; never the operator's); embedded: generated",
    hexKey.optional(),
  ),
  governancePrivateKey: secret(
    "GOVERNANCE_PRIVATE_KEY",
    "The governance key (DEFAULT_ADMIN_ROLE: registers departments, their wallet changes and workflow versions) when a single key governs; npm start sets the development chain's deployer key on chain 31337 only. Unset: those routes answer 202 AWAITING_GOVERNANCE with the transaction for governance (a Safe) to execute",
    hexKey.optional(),
  ),
  signer: setting(
    "SIGNER",
    "Who holds the wallets' keys: local (the encrypted key vault, under MASTER_KEY) or remote (a JSON-RPC signer: Web3Signer, EthSigner, Clef)",
    oneOf("local", "remote").default("local"),
  ),
  remoteSignerUrl: setting(
    "REMOTE_SIGNER_URL",
    "SIGNER=remote: the signer's JSON-RPC URL (eth_accounts, eth_signTransaction)",
    url.optional(),
  ),
  remoteSignerAuth: secret(
    "REMOTE_SIGNER_AUTH",
    "SIGNER=remote: Authorization header sent to the signer, e.g. Bearer TOKEN or Basic BASE64",
    z.string().optional(),
  ),
  operatorAddress: setting(
    "OPERATOR_ADDRESS",
    "SIGNER=remote: the operator wallet, a key of the remote signer (holds the operator's roles)",
    address.optional(),
  ),
  adminWalletAddress: setting(
    "ADMIN_WALLET_ADDRESS",
    "SIGNER=remote: the administration wallet (ADMIN_ROLE), another key of the remote signer than the operator's",
    address.optional(),
  ),
  masterKey: secret(
    "MASTER_KEY",
    "32-byte hex key encrypting wallet keys at rest (AES-256-GCM); embedded: generated under DATA_DIR",
    hexKey.optional(),
  ),
  licenceTokenAddress: setting(
    "LICENCE_TOKEN_ADDRESS",
    "LicenceToken address, instead of the deployment file",
    address.optional(),
  ),
  documentRegistryAddress: setting(
    "DOCUMENT_REGISTRY_ADDRESS",
    "DocumentRegistry address, instead of the deployment file",
    address.optional(),
  ),
  approvalRegistryAddress: setting(
    "APPROVAL_REGISTRY_ADDRESS",
    "ApprovalRegistry address, instead of the deployment file",
    address.optional(),
  ),
  deploymentStartBlock: setting(
    "DEPLOYMENT_START_BLOCK",
    "Block the contracts were deployed at, with the address variables",
    integer(0, Number.MAX_SAFE_INTEGER).default(0),
  ),

  indexerPort: setting("INDEXER_PORT", "Port of the Ponder indexer's HTTP server", integer(1, 65535).default(42069)),
  indexerHost: setting(
    "INDEXER_HOST",
    "npm run indexer: address the indexer listens on (another host's API reaches it through INDEXER_URL)",
    z.string().default("127.0.0.1"),
  ),
  indexerUrl: setting(
    "INDEXER_URL",
    "URL of the Ponder indexer; default http://127.0.0.1:INDEXER_PORT",
    url.optional(),
  ),

  // Authentication (api/src/auth)
  jwtPrivateKey: secret(
    "JWT_PRIVATE_KEY",
    "PKCS#8 PEM of the ES256 key signing service tokens; embedded: generated under DATA_DIR",
    z.string().optional(),
  ),
  jwtIssuer: setting(
    "JWT_ISSUER",
    "iss of service tokens; default PUBLIC_BASE_URL (APIs sharing tokens behind different URLs name one issuer)",
    z.string().optional(),
  ),
  accessTokenTtlSeconds: setting(
    "ACCESS_TOKEN_TTL_SECONDS",
    "Lifetime of access tokens (seconds)",
    integer(1, 86_400).default(3600),
  ),
  adminClientId: setting(
    "ADMIN_CLIENT_ID",
    "Bootstrap admin client id; embedded: generated and printed by npm start",
    z.string().optional(),
  ),
  adminClientSecret: secret(
    "ADMIN_CLIENT_SECRET",
    "Bootstrap admin client secret, at least 32 characters and about 128 bits by estimate (e.g. openssl rand -hex 32; weak ones are refused without DEV_CONVENIENCES); embedded: generated and printed by npm start",
    z.string().optional(),
  ),
  identityProviderAuthorizeUrl: setting(
    "IDENTITY_PROVIDER_AUTHORIZE_URL",
    "Identity locker (OAuth 2.0 / OIDC) authorize URL; unset: built-in development provider (refused in production)",
    url.optional(),
  ),
  identityProviderTokenUrl: setting("IDENTITY_PROVIDER_TOKEN_URL", "Identity locker token URL", url.optional()),
  identityProviderUserinfoUrl: setting(
    "IDENTITY_PROVIDER_USERINFO_URL",
    "Identity locker userinfo URL (sub, name, email)",
    url.optional(),
  ),
  identityProviderClientId: setting(
    "IDENTITY_PROVIDER_CLIENT_ID",
    "Our client id at the identity locker",
    z.string().optional(),
  ),
  identityProviderClientSecret: secret(
    "IDENTITY_PROVIDER_CLIENT_SECRET",
    "Our client secret at the identity locker",
    z.string().optional(),
  ),
  redirectUriAllowlist: setting(
    "REDIRECT_URI_ALLOWLIST",
    "Registered applicant clients and their redirect URIs, comma-separated `client_id=uri` (or `uri`: client_id is its origin); matched exactly (with DEV_CONVENIENCES any loopback http URI is accepted)",
    list.default([]),
  ),
  requireSignedRequests: setting(
    "REQUIRE_SIGNED_REQUESTS",
    "true: every department signs its requests (X-Timestamp, X-Signature), not only those registered with requireSignedRequests",
    bool.default(false),
  ),
  issuerPrivateKey: secret(
    "ISSUER_PRIVATE_KEY",
    "secp256k1 key signing licences' QR codes (EIP-191); embedded: generated under DATA_DIR",
    hexKey.optional(),
  ),
  custodySecret: secret(
    "CUSTODY_SECRET",
    "32-byte hex secret deriving applicants' custodial addresses; embedded: generated under DATA_DIR",
    hexKey.optional(),
  ),

  // Document storage (api/src/storage)
  storageBackend: setting(
    "STORAGE_BACKEND",
    "local (files under DATA_DIR/files) or s3",
    oneOf("local", "s3").default("local"),
  ),
  s3Endpoint: setting("S3_ENDPOINT", "S3 endpoint URL (unset: AWS default for the region)", url.optional()),
  s3Region: setting("S3_REGION", "S3 region", z.string().default("us-east-1")),
  s3Bucket: setting("S3_BUCKET", "S3 bucket for documents", z.string().default("licence-documents")),
  s3AccessKeyId: setting("S3_ACCESS_KEY_ID", "S3 access key id", z.string().optional()),
  s3SecretAccessKey: secret("S3_SECRET_ACCESS_KEY", "S3 secret access key", z.string().optional()),
  s3ForcePathStyle: setting(
    "S3_FORCE_PATH_STYLE",
    "Path-style S3 URLs (most S3-compatible servers need it)",
    bool.default(true),
  ),
  fileUrlSecret: secret(
    "FILE_URL_SECRET",
    "32-byte hex key signing local download URLs; embedded: generated under DATA_DIR",
    hexKey.optional(),
  ),
  refuseActivePdf: setting(
    "REFUSE_ACTIVE_PDF",
    "true: refuse PDFs carrying JavaScript, launch actions, embedded files, XFA, open or additional actions, links, form submission or rich media (400 INVALID_FILE, reason ACTIVE_CONTENT); false: accept them flagged in the document detail. Default: true in production, false elsewhere. PDFs the scanner cannot judge are refused either way (reason UNSCANNABLE)",
    bool.optional(),
  ),

  licenceValidityDays: setting(
    "LICENCE_VALIDITY_DAYS",
    "Lifetime of an issued licence per request type, TYPE=days comma-separated (0: never expires)",
    validityDays.default(LICENCE_VALIDITY_DAYS),
  ),
  rateLimitAuthPerMinute: setting(
    "RATE_LIMIT_AUTH_PER_MINUTE",
    "Failed authentications (a wrong client secret, API key or token) per minute per credential and address, and per address; the sign-in endpoints (/auth/*) take five times as many requests per address; 0: no limit",
    integer(0, 1_000_000).default(60),
  ),
  rateLimitWritePerMinute: setting(
    "RATE_LIMIT_WRITE_PER_MINUTE",
    "Write requests (POST/PUT/PATCH/DELETE) per caller per minute; 0: no limit",
    integer(0, 1_000_000).default(600),
  ),
  rateLimitReadPerMinute: setting(
    "RATE_LIMIT_READ_PER_MINUTE",
    "Authenticated reads (GET) per caller (applicant, client or department) per minute; 0: no limit",
    integer(0, 1_000_000).default(600),
  ),
  rateLimitPublicPerMinute: setting(
    "RATE_LIMIT_PUBLIC_PER_MINUTE",
    "Public reads (/verify*, /health) per client address (IPv6: per /64) per minute; 0: no limit",
    integer(0, 1_000_000).default(120),
  ),
  requestQuotaPerDay: setting(
    "REQUEST_QUOTA_PER_DAY",
    "Requests one applicant may create in any 24 hours (each mints through the shared operator wallet); beyond: 429 QUOTA_EXCEEDED; 0: no quota",
    integer(0, 1_000_000).default(50),
  ),
  documentVersionsPerDocument: setting(
    "DOCUMENT_VERSIONS_PER_DOCUMENT",
    "Versions one document may have (the first upload is version 1); beyond: 409 DOCUMENT_BUDGET_EXCEEDED; 0: only the contract's 32,767",
    integer(0, 32_767).default(20),
  ),
  documentVersionsPerDay: setting(
    "DOCUMENT_VERSIONS_PER_DAY",
    "Document versions (first uploads and new versions) uploaded to one applicant's requests in any 24 hours, each anchored through the shared operator wallet; beyond: 429 DOCUMENT_BUDGET_EXCEEDED; 0: no budget",
    integer(0, 1_000_000).default(200),
  ),
  documentBytesPerDay: setting(
    "DOCUMENT_BYTES_PER_DAY",
    "Bytes of document versions uploaded to one applicant's requests in any 24 hours; beyond: 429 DOCUMENT_BUDGET_EXCEEDED; 0: no budget",
    integer(0, Number.MAX_SAFE_INTEGER).default(500 * 1024 * 1024),
  ),
  metricsToken: secret(
    "METRICS_TOKEN",
    "When set, /metrics answers only `Authorization: Bearer <METRICS_TOKEN>` (unset: public, rate-limited like /health; required in production)",
    z.string().optional(),
  ),
  trustProxyHops: setting(
    "TRUST_PROXY_HOPS",
    "Reverse proxies in front of the API that append to X-Forwarded-For; the client address (rate limits, audit rows) is the one the outermost trusted proxy saw; 0: the socket address",
    integer(0, 10).default(0),
  ),

  // Jobs (api/src/jobs): webhooks, event derivation, stage timeouts
  jobsInApi: setting(
    "JOBS_IN_API",
    "Run the job runner inside the API process (false when `npm run worker` runs it)",
    bool.default(true),
  ),
  jobPollMs: setting(
    "JOB_POLL_MS",
    "How often the job runner looks for due jobs (ms); new jobs also wake it at once. Tests poll every 100 ms so retries on the accelerated clock (JOB_TIME_SCALE) run when due",
    integer(50, 60_000).default(1_000),
  ),
  jobLockMs: setting(
    "JOB_LOCK_MS",
    "A job whose runner died is taken over after this long (ms; deliveries: at least 15 s, above their 10 s timeout). The test stack uses 15 s, so the jobs of a process a test kills resume sooner",
    integer(1_000, 3_600_000).default(60_000),
  ),
  jobTimeScale: setting(
    "JOB_TIME_SCALE",
    "Tests only: multiplies the webhook retry delays (1 min … 24 h) so the schedule runs in seconds; 1 in production",
    fraction.default(1),
  ),
  // Processes (npm start)
  apiProcesses: setting(
    "API_PROCESSES",
    "npm start: API processes sharing PORT (reusePort); default one per core",
    integer(1, 64).optional(),
  ),
  workerProcesses: setting(
    "WORKER_PROCESSES",
    "npm start: job-runner processes; when above 0 the APIs run no jobs unless JOBS_IN_API is set",
    integer(0, 64).default(0),
  ),
  startIndexer: setting(
    "START_INDEXER",
    "npm start: run the indexer (false when it runs elsewhere)",
    bool.default(true),
  ),
});

/**
 * Former settings, now fixed: tuning that no deployment had reason to turn (docs/decisions.md, "Fewer settings").
 * They stay on the config object so the code that reads them is unchanged.
 */
const FIXED = {
  /** Postgres connections per API or worker process: (API_PROCESSES + WORKER_PROCESSES) × 20 under max_connections. */
  dbPoolSize: 20,
  /** One signing call to a remote signer. */
  remoteSignerTimeoutMs: 10_000,
  /** A write waits this long for its transaction to be mined (the outbox re-checks it afterwards). */
  receiptTimeoutMs: 30_000,
  /** Pending transactions are re-checked and re-broadcast this often. */
  reconcileIntervalMs: 2_000,
  /** A write waits this long for the indexer to reach its block; past it the write succeeds with a warning. */
  readYourWritesTimeoutMs: 5_000,
  /** Blocks the indexer may trail the chain head while /health says ok. */
  healthMaxIndexerLag: 5,
  jwtAudience: "licence-approval-api",
  /** The largest document (the API description's 10 MB; larger: 413). */
  maxUploadBytes: 10 * 1024 * 1024,
  /** Request metadata, serialized JSON bytes (beyond: 400 METADATA_TOO_LARGE). */
  maxMetadataBytes: 16 * 1024,
  /** Time for a request's headers, then for the whole request (a 10 MB upload on a slow link), before 408. */
  headersTimeoutMs: 20_000,
  requestTimeoutMs: 120_000,
  /** Jobs of one kind a runner works on at once. */
  jobConcurrency: 10,
};

type Shape = typeof schema.shape;
/** Settings whose default depends on another (filled in by `read`) are never undefined once read. */
export type Config = z.output<typeof schema> & typeof FIXED & { refuseActivePdf: boolean; apiProcesses: number };

interface Setting {
  env: string;
  doc: string;
  /** Default, as the variable would be written (.env.example), or undefined. */
  fallback?: unknown;
  secret: boolean;
}

/** Every setting's variable, description, default and secrecy, as .env.example and tests list them. */
export const settings = Object.fromEntries(
  Object.entries(schema.shape).map(([key, field]) => {
    const meta = z.globalRegistry.get(field) as { env: string; description: string; secret?: true };
    const fallback = "defaultValue" in field.def ? field.def.defaultValue : undefined;
    return [key, { env: meta.env, doc: meta.description, fallback, secret: meta.secret === true }];
  }),
) as Record<keyof Shape, Setting>;

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
    throw new Error(`ENV_FILE ${file}: ${(error as Error).message}`);
  }
}

/** One error listing every problem found, if any. */
function failOn(problems: string[]): void {
  if (problems.length > 0) throw new Error(`Invalid configuration:\n  - ${problems.join("\n  - ")}`);
}

/** Reads and checks `keys`' settings ("" is unset), adding a problem per bad variable. */
function read(keys: readonly (keyof Shape)[], env: NodeJS.ProcessEnv, problems: string[]): Record<string, unknown> {
  const config: Record<string, unknown> = {};
  for (const key of keys) {
    const raw = env[settings[key].env] || undefined;
    const parsed = schema.shape[key].safeParse(raw);
    if (parsed.success) config[key] = parsed.data;
    else {
      const got = raw === undefined || settings[key].secret ? "" : ` (got "${raw}")`;
      problems.push(`${settings[key].env} ${parsed.error.issues[0].message}${got}`);
    }
  }
  if (keys.includes("refuseActivePdf")) config.refuseActivePdf ??= env.NODE_ENV === "production";
  if (keys.includes("apiProcesses")) config.apiProcesses ??= os.availableParallelism();
  return config;
}

/**
 * Reads and checks only the settings a process of another kind needs (the indexer: `npm run indexer`), none of the
 * API's rules; throws one error listing every bad variable.
 */
export function loadSettings<K extends keyof Shape>(
  keys: readonly K[],
  env: NodeJS.ProcessEnv = process.env,
): Pick<Config, K> {
  const problems: string[] = [];
  const values = read(keys, env, problems);
  failOn(problems);
  return values as Pick<Config, K>;
}

/** Reads and checks every setting; throws one error listing every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const problems: string[] = [];
  const result = { ...read(Object.keys(settings) as (keyof Shape)[], env, problems), ...FIXED } as Config;
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
  for (const [key, setting] of Object.entries(settings) as [keyof Shape, Setting][]) {
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
