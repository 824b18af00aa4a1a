/**
 * Runs the Ponder indexer (indexer/) as a child process: of npm start's supervisor, or of `npm run indexer`
 * (scripts/indexer.ts). Ponder refuses a schema used by another build, so each build (indexer code, ABIs,
 * deployment, chain epoch) gets its own schema `ix_<hash>`; the API reads the stable views schema, which
 * `ponder start --views-schema` points at the live build.
 */
import { createHash } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { spawnNode, waitUntil, type ManagedProcess } from "./managedProcess.ts";

/** The views schema the API's SQL names (index.*): fixed, so one database holds one stack (docs/decisions.md). */
const VIEWS_SCHEMA = "index";
/** Build schemas' prefix, derived from the views schema's name as it always was, so old builds are still cleaned up. */
const BUILD_SCHEMA_PREFIX = `ix_${createHash("sha256").update(VIEWS_SCHEMA).digest("hex").slice(0, 6)}_`;

export interface IndexerOptions {
  repoRoot: string;
  /** npm start's: logs and the pid file go under it. Unset (a role of its own): output to stdout only, no pid file. */
  dataDir?: string;
  databaseUrl: string;
  rpcUrl: string;
  /** WebSocket endpoint of the chain ("" : none, Ponder polls for new blocks). */
  wsUrl?: string;
  deploymentFile: string;
  port: number;
  host?: string; // default 127.0.0.1
  epoch: number;
  echo?: boolean;
  /** Called as soon as the process exists, before it is ready: a supervisor stopping meanwhile must stop it too. */
  onSpawn?: (process: ManagedProcess) => void;
}

export type IndexerHandle = Awaited<ReturnType<typeof startIndexer>>;

export async function startIndexer(options: IndexerOptions) {
  const schema = await buildSchemaName(options);
  // ponder's exports hide package.json: locate its CLI next to its entry point (dist/esm/index.js).
  const ponderBin = path.join(path.dirname(fileURLToPath(import.meta.resolve("ponder"))), "bin", "ponder.js");
  const [port, host] = [String(options.port), options.host ?? "127.0.0.1"];
  const processHandle = await spawnNode({
    name: "indexer",
    script: ponderBin,
    args: ["start", "--root", "indexer", "--schema", schema, "--views-schema", VIEWS_SCHEMA, "-p", port, "-H", host],
    cwd: options.repoRoot,
    env: {
      ...process.env,
      // Ponder prefers PORT over its -p flag: never let it inherit the API's.
      PORT: port,
      DATABASE_URL: options.databaseUrl,
      CHAIN_RPC_URL: options.rpcUrl,
      CHAIN_WS_URL: options.wsUrl ?? "",
      DEPLOYMENT_FILE: options.deploymentFile,
      PONDER_TELEMETRY_DISABLED: "true",
    },
    logDir: options.dataDir && path.join(options.dataDir, "logs"),
    echo: options.echo,
    dataDir: options.dataDir,
  });
  options.onSpawn?.(processHandle);
  const url = `http://${reachable(host)}:${port}`;
  await waitUntil(processHandle, async () => (await fetch(`${url}/ready`)).status === 200, 120_000, "indexer (Ponder)");
  await dropOldSchemas(options.databaseUrl, BUILD_SCHEMA_PREFIX, schema);
  // Stopped with a grace of 30 s by default: Ponder finishes what it is writing.
  return { url, schema, process: processHandle, stop: (graceMs = 30_000) => processHandle.stop(graceMs) };
}

/** The address to reach a server listening on `host` from this machine (any address: loopback). */
const reachable = (host: string) => (host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host);

async function buildSchemaName(options: IndexerOptions): Promise<string> {
  const hash = createHash("sha256");
  for (const dir of ["indexer", "abis"])
    for (const file of await listFiles(path.join(options.repoRoot, dir)))
      hash.update(file).update(await readFile(file));
  hash.update(await readFile(options.deploymentFile));
  hash.update(`epoch:${options.epoch}`);
  return `${BUILD_SCHEMA_PREFIX}${hash.digest("hex").slice(0, 16)}`;
}

/** Every file under `dir` but dot files, node_modules and generated code, sorted. */
async function listFiles(dir: string): Promise<string[]> {
  const skipped = (part: string) => part.startsWith(".") || part === "node_modules" || part === "generated";
  return (await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []))
    .map((entry) => [entry, path.join(entry.parentPath, entry.name)] as const)
    .filter(([entry, full]) => !entry.isDirectory() && !path.relative(dir, full).split(path.sep).some(skipped))
    .map(([, full]) => full)
    .sort();
}

/**
 * Earlier builds' schemas of the same views schema are dead weight once the new build is ready (and so are builds
 * named before schemas carried their views schema: `ix_` and 16 hex digits).
 */
async function dropOldSchemas(databaseUrl: string, prefix: string, current: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query(
      `SELECT nspname FROM pg_namespace WHERE (starts_with(nspname, $1) OR nspname ~ '^ix_[0-9a-f]{16}$') AND nspname <> $2`,
      [prefix, current],
    );
    for (const row of rows) await client.query(`DROP SCHEMA IF EXISTS "${row.nspname}" CASCADE`);
  } finally {
    await client.end();
  }
}
