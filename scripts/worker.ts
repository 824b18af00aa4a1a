/**
 * `npm run worker`: the job runner as its own process, on the API's environment (ENV_FILE, default ./.env, read
 * first; variables already set win). Without DATABASE_URL or CHAIN_RPC_URL it joins the `npm start` on its DATA_DIR,
 * as DATA_DIR/run/stack.json describes it (moved ports followed), waiting while that stack is still starting.
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
  const join: Record<string, string | undefined> = { ...stack.env, PUBLIC_BASE_URL: stack.url };
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
