/**
 * `npm run worker`: the job runner as its own process. Against real services it takes the same environment as the
 * API (a `.env` file is read first: ENV_FILE, default ./.env; variables already set win). Next to an embedded
 * `npm start` on the same DATA_DIR it joins that stack: the supervisor's DATA_DIR/run/stack.json gives the chain
 * (URL and id), the database, the indexer, the deployment and the token issuer, so moved ports are followed. Started
 * while that stack is still starting, it waits until the stack has recorded them.
 * Start the API with JOBS_IN_API=false to leave every job to workers (both may also run them together).
 */
import { loadConfig, readEnvFile } from "../api/src/config.ts";
import { apiRoleUrl } from "./stack/apiDatabaseRole.ts";
import { stackToJoin } from "./stack/stackLock.ts";

readEnvFile();

const config = loadConfig();
if (!config.databaseUrl || !config.chainRpcUrl) {
  const stack = await stackToJoin(config.dataDir, {
    timeoutMs: 10 * 60_000,
    waiting: (starting) =>
      console.log(`The platform on ${config.dataDir} (pid ${starting.pid}) is still starting: waiting to join it…`),
  }).catch((error: Error) => {
    console.error(error.message);
    process.exit(1);
  });
  if (!stack) {
    console.error(
      `No platform is running on ${config.dataDir} (no live DATA_DIR/run/stack.json). Start it with \`npm start\` (same DATA_DIR), ` +
        "or give the worker its services: DATABASE_URL, CHAIN_RPC_URL, CHAIN_ID, DEPLOYMENT_FILE (see docs/architecture.md, “Several hosts”).",
    );
    process.exit(1);
  }
  const join: Record<string, string | undefined> = {
    CHAIN_RPC_URL: stack.chainRpcUrl,
    CHAIN_ID: String(stack.chainId),
    CHAIN_FUNDING: stack.chainFunding,
    DEPLOYMENT_FILE: stack.deploymentFile,
    INDEXER_URL: stack.indexerUrl,
    JWT_ISSUER: stack.jwtIssuer,
    API_DB_SCHEMA: stack.apiSchema,
    PUBLIC_BASE_URL: stack.url,
    // A development stack's secrets are those generated under DATA_DIR: the worker joins with the same conveniences.
    DEV_CONVENIENCES: stack.devConveniences ? "true" : undefined,
  };
  // The embedded database as the API's own role, like the stack's API and worker processes.
  if (!config.databaseUrl && stack.embeddedPostgresPort)
    join.DATABASE_URL = await apiRoleUrl(config.dataDir, stack.embeddedPostgresPort);
  if (!config.databaseUrl && !join.DATABASE_URL) {
    console.error(
      `The platform on ${config.dataDir} uses a database of its own (DATABASE_URL), which it does not record: give the worker the same DATABASE_URL.`,
    );
    process.exit(1);
  }
  // What the operator set explicitly wins over what the running stack says.
  for (const [name, value] of Object.entries(join))
    if (value !== undefined && !process.env[name]) process.env[name] = value;
}
await import("../api/src/worker.ts");
