/**
 * The API process: `node api/src/main.ts` (started by `npm start`, or on its own against a real Postgres and
 * chain). Reconciles the outbox before serving, then serves until SIGINT/SIGTERM.
 */
import { readFile } from "node:fs/promises";
import type { Server } from "node:http";
import { createApp } from "./app.ts";
import { describeConfig, loadConfig } from "./config.ts";
import { loadDeployment } from "./chain/deployment.ts";
import { createLogger } from "./observability/logger.ts";
import { Metrics } from "./observability/metrics.ts";
import { createAuth } from "./auth/index.ts";
import { apiRoutes } from "./routes/index.ts";
import { createDocumentStore } from "./storage/index.ts";
import type { DomainContext } from "./domain/context.ts";
import { WorkflowStore } from "./domain/workflows/workflowStore.ts";
import { developmentSecret } from "./developmentSecrets.ts";
import { IdempotencyStore } from "./http/idempotency.ts";
import { createDepartmentKeyCheck } from "./domain/departments/departmentAuth.ts";
import { createCoreServices } from "./services.ts";

const config = loadConfig();
const logger = createLogger(config.logLevel);
const metrics = new Metrics();
logger.info({ config: describeConfig(config) }, "starting API");

const core = await createCoreServices(config, logger, metrics);
const deployment = await loadDeployment(config);
await core.gateway.reconcile().catch((error) => logger.error({ err: error }, "start-up reconciliation failed; retrying in the background"));
core.gateway.startReconcileLoop(config.reconcileIntervalMs);

const operator = await core.wallets.findByPurpose("OPERATOR");
if (!operator) throw new Error("No operator wallet: start the stack with npm start (or set OPERATOR_PRIVATE_KEY on first start)");
const context: DomainContext = {
  config,
  pool: core.pool,
  gateway: core.gateway,
  operator,
  contracts: deployment.contracts,
  workflows: new WorkflowStore(core.pool),
  documentStore: await createDocumentStore(config),
  logger,
  custodySecret: config.custodySecret ?? (await developmentSecret(config.dataDir, "custody.key")),
  wallets: core.wallets,
  vault: core.vault,
};
// Departments authenticate with their API key (and, when required, signed requests).
const auth = await createAuth({ config, pool: core.pool, logger, departments: createDepartmentKeyCheck(context) });
await auth.bootstrapAdmin();
const routes = apiRoutes(context, auth);

const app = createApp({
  ...core,
  logger,
  metrics,
  publicBaseUrl: config.publicBaseUrl!,
  maxIndexerLag: config.healthMaxIndexerLag,
  routes: routes.api,
  rootRoutes: routes.root,
  authenticate: auth.authenticate,
  idempotency: new IdempotencyStore(core.pool),
  decisions: await readFile(new URL("../../docs/decisions.md", import.meta.url), "utf8").catch(() => undefined),
});

const server: Server = await new Promise((resolve, reject) => {
  const s = app.listen(config.port, config.host, () => resolve(s));
  s.once("error", (error: NodeJS.ErrnoException) => {
    reject(error.code === "EADDRINUSE" ? new Error(`Port ${config.port} (API) is already in use. Set PORT to a free port.`) : error);
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
  await core.close().catch(() => {});
  process.exit(0);
}
process.on("SIGINT", () => void shutdown("SIGINT"));
process.on("SIGTERM", () => void shutdown("SIGTERM"));
