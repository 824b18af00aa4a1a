/**
 * The API process: `node api/src/main.ts` (started by `npm start`, or on its own against a real Postgres and
 * chain). Reconciles the outbox before serving, runs the job runner unless JOBS_IN_API=false, then serves until
 * SIGINT/SIGTERM.
 */
import { DECISIONS_LINK } from "./http/openApiDocument.ts";
import type { Server } from "node:http";
import { createHttpServer } from "./http/httpServer.ts";
import { createApp } from "./app.ts";
import { assertConfiguredSecrets, describeConfig, loadConfig, readEnvFile } from "./config.ts";
import { createLogger } from "./observability/logger.ts";
import { logUnhandledRejections } from "./observability/processErrors.ts";
import { Metrics } from "./observability/metrics.ts";
import { createAuth } from "./auth/index.ts";
import { createConsoleSessionCheck } from "./auth/consoleSessions.ts";
import { apiRoutes } from "./routes/index.ts";
import { IdempotencyStore } from "./http/idempotency.ts";
import { FailedCredentials, PostgresBuckets, RateLimiter } from "./http/rateLimit.ts";
import { createDepartmentKeyCheck } from "./auth/departmentKeys.ts";
import { DepartmentCredentialStore } from "./auth/departmentCredentialStore.ts";
import { createDomainContext, createProcessServices } from "./services.ts";
import { jobClock } from "./jobs/jobClock.ts";
import { startJobRunner } from "./jobs/jobRunner.ts";
import { developmentSecret } from "./developmentSecrets.ts";
import { QrIssuer } from "./domain/verification/qrPayload.ts";

readEnvFile();
const config = loadConfig();
assertConfiguredSecrets(config); // before anything could generate a secret
const logger = createLogger(config.logLevel);
logUnhandledRejections(logger);
if (config.devConveniences)
  logger.warn(
    "DEV_CONVENIENCES=true: passwordless development sign-in and generated secrets are on (a local development stack only)",
  );
const metrics = new Metrics();
logger.info({ config: describeConfig(config) }, "starting API");

const core = await createProcessServices(config, logger, metrics);
const context = await createDomainContext(config, logger, core);
const jobs = config.jobsInApi
  ? await startJobRunner(context, {
      index: core.index,
      pollMs: config.jobPollMs,
      lockMs: config.jobLockMs,
      concurrency: config.jobConcurrency,
      clock: jobClock(config.jobTimeScale),
    })
  : undefined;
// One set of buckets, in Postgres and shared with every other API process: the route table's limits and the
// authentication module's failed credentials.
const limiter = new RateLimiter(
  {
    authPerMinute: config.rateLimitAuthPerMinute,
    writePerMinute: config.rateLimitWritePerMinute,
    readPerMinute: config.rateLimitReadPerMinute,
    publicPerMinute: config.rateLimitPublicPerMinute,
  },
  new PostgresBuckets(core.pool, logger),
);
// Departments authenticate with their API key (and, when required, signed requests).
const auth = await createAuth({
  config,
  pool: core.pool,
  logger,
  failures: new FailedCredentials(limiter),
  departments: createDepartmentKeyCheck({
    credentials: new DepartmentCredentialStore(core.pool),
    openSecret: (code, sealed) => context.departmentSecrets.open(code, sealed),
    signingRequiredForAll: config.requireSignedRequests,
  }),
  // Reviewers signed in to the review console act as their department, on the routes a reviewer needs.
  consoleSessions: createConsoleSessionCheck({ pool: core.pool, config }),
});
await auth.bootstrapAdmin();
// The key signing licences' QR codes (its address is published at /api/v1/verify/issuer).
const issuer = new QrIssuer(config.issuerPrivateKey ?? (await developmentSecret(config.dataDir, "issuer.key")));
const routes = apiRoutes(context, auth, issuer);

const app = createApp({
  ...core,
  logger,
  metrics,
  publicBaseUrl: config.publicBaseUrl!,
  maxIndexerLag: config.healthMaxIndexerLag,
  routes: routes.api,
  rootRoutes: routes.root,
  authenticate: auth.authenticate,
  // Keys past their 24 h window are purged; a key whose process died after recording its write is answered from
  // that write's confirmed transaction.
  idempotency: new IdempotencyStore(core.pool, {
    purgeEveryMs: 10 * 60_000,
    confirmed: (outboxTxId) => core.gateway.confirmedTransaction(outboxTxId),
  }),
  limiter,
  trustProxyHops: config.trustProxyHops,
  metricsToken: config.metricsToken,
  // The decisions log has a page of its own (/docs/decisions): the document's description only points at it.
  decisions: DECISIONS_LINK,
});

// reusePort: several API processes (npm start's API_PROCESSES, or more started by hand) share one port and the
// kernel spreads connections over them; no master process in front. API_INSTANCE names this one in responses.
const handle = app.callback();
const instance = config.apiInstance;
const server: Server = await new Promise((resolve, reject) => {
  const s = createHttpServer(
    (request, response) => {
      if (instance) response.setHeader("x-api-instance", instance);
      return handle(request, response);
    },
    { headersMs: config.headersTimeoutMs, requestMs: config.requestTimeoutMs },
  );
  s.listen({ port: config.port, host: config.host, reusePort: true }, () => resolve(s));
  s.once("error", (error: NodeJS.ErrnoException) => {
    reject(
      error.code === "EADDRINUSE"
        ? new Error(`Port ${config.port} (API) is already in use. Set PORT to a free port.`)
        : error,
    );
  });
});
const address = server.address();
const port = typeof address === "object" && address ? address.port : config.port;
logger.info({ url: `http://${config.host}:${port}` }, "API listening");
// The supervisor reads this line to learn the port (PORT=0 picks a free one).
process.send?.({ type: "listening", port });

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, "stopping API");
  server.close();
  server.closeAllConnections();
  await jobs?.stop().catch(() => {});
  await core.close().catch(() => {});
  process.exit(0);
}
process.on("SIGINT", () => void shutdown("SIGINT"));
process.on("SIGTERM", () => void shutdown("SIGTERM"));
