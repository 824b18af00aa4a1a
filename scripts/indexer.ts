/**
 * `npm run indexer`: the Ponder indexer as a role of its own, for a host of its own (docs/architecture.md, "More
 * than one process"), on the settings of its `.env` file (ENV_FILE, default ./.env; variables already set win).
 * When Ponder stops by itself it exits non-zero, for a service manager to restart it.
 */
import { fileURLToPath } from "node:url";
import { loadSettings, readEnvFile, settings } from "../api/src/config.ts";
import { startIndexer } from "./stack/indexerProcess.ts";
import type { ManagedProcess } from "./stack/managedProcess.ts";

const REQUIRED = ["databaseUrl", "chainRpcUrl", "deploymentFile"] as const;

readEnvFile();
const config = loadSettings([...REQUIRED, "indexerHost", "indexerPort"]);
const missing = REQUIRED.filter((key) => !config[key]).map((key) => settings[key].env);
if (missing.length > 0) {
  console.error(
    `npm run indexer needs ${missing.join(", ")} (set in the environment or in .env, ENV_FILE). See docs/architecture.md, “More than one process”.`,
  );
  process.exit(1);
}

let ponder: ManagedProcess | undefined;
let stopping = false;
for (const signal of ["SIGINT", "SIGTERM"] as const)
  process.on(signal, async () => {
    if (stopping) return;
    stopping = true;
    console.log(`${signal}: stopping the indexer…`);
    await ponder?.stop(10_000);
    process.exit(0);
  });

console.log(`Starting the indexer on ${config.indexerHost}:${config.indexerPort}…`);
try {
  const indexer = await startIndexer({
    repoRoot: fileURLToPath(new URL("..", import.meta.url)),
    databaseUrl: config.databaseUrl!,
    rpcUrl: config.chainRpcUrl!,
    deploymentFile: config.deploymentFile!,
    host: config.indexerHost,
    port: config.indexerPort,
    // One chain instance: a fresh schema is only ever needed for a new build (code, ABIs, deployment).
    epoch: 0,
    echo: true,
    onSpawn: (spawned) => (ponder = spawned),
  });
  console.log(`Indexer ready at ${indexer.url} (schema ${indexer.schema}, views in schema index)`);
  const code = await indexer.process.exited;
  if (!stopping) {
    console.error(`The indexer (Ponder) stopped by itself (exit code ${code}).`);
    process.exit(code || 1);
  }
} catch (error) {
  if (!stopping) {
    console.error(`Could not start the indexer: ${(error as Error).message}`);
    process.exit(1);
  }
}
