/**
 * `npm run worker`: the job runner as its own process. Against real services it takes the same environment as
 * the API; next to an embedded `npm start` (same DATA_DIR) it finds that stack's Postgres and chain itself.
 * Start the API with JOBS_IN_API=false to leave every job to workers (both may also run them together).
 */
import { loadConfig } from "../api/src/config.ts";
import { developmentSecret } from "../api/src/developmentSecrets.ts";

const config = loadConfig();
if (!config.databaseUrl) {
  const password = (await developmentSecret(config.dataDir, "postgres.password", 24)).slice(2);
  process.env.DATABASE_URL = `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${config.embeddedPostgresPort}/licence`;
}
if (!config.chainRpcUrl) {
  process.env.CHAIN_RPC_URL = `http://127.0.0.1:${config.chainPort}`;
  process.env.CHAIN_FUNDING ??= "anvil";
}
await import("../api/src/worker.ts");
