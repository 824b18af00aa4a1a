/**
 * Runs the API's SQL migrations (api/src/db/migrations/NNN_name.sql, in order) inside its own schema, each in a
 * transaction, under an advisory lock so several API processes starting together migrate once.
 */
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type pg from "pg";

const MIGRATIONS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), "migrations");
const LOCK_ID = 0x6c6963656e6365n; // "licence"

export async function migrate(pool: pg.Pool, schema: string): Promise<string[]> {
  const client = await pool.connect();
  const applied: string[] = [];
  try {
    await client.query("SELECT pg_advisory_lock($1)", [LOCK_ID]);
    // Only when missing: a role that owns its schema but may not create schemas (the embedded stack's API role) can
    // still run the migrations, and CREATE SCHEMA IF NOT EXISTS checks that right first.
    const exists = await client.query(`SELECT 1 FROM pg_namespace WHERE nspname = $1`, [schema]);
    if (exists.rowCount === 0) await client.query(`CREATE SCHEMA ${ident(schema)}`);
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${ident(schema)}.schema_migrations (version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`,
    );
    const done = new Set(
      (await client.query(`SELECT version FROM ${ident(schema)}.schema_migrations`)).rows.map((r) => r.version),
    );
    const files = (await readdir(MIGRATIONS_DIR)).filter((f) => /^\d+_.*\.sql$/.test(f)).sort();
    for (const file of files) {
      if (done.has(file)) continue;
      const sql = await readFile(path.join(MIGRATIONS_DIR, file), "utf8");
      await client.query("BEGIN");
      try {
        await client.query(`SET LOCAL search_path TO ${ident(schema)}`);
        await client.query(sql);
        await client.query(`INSERT INTO ${ident(schema)}.schema_migrations (version) VALUES ($1)`, [file]);
        await client.query("COMMIT");
        applied.push(file);
      } catch (error) {
        await client.query("ROLLBACK");
        throw new Error(`migration ${file} failed: ${(error as Error).message}`);
      }
    }
  } finally {
    await client.query("SELECT pg_advisory_unlock($1)", [LOCK_ID]).catch(() => {});
    client.release();
  }
  return applied;
}

/** Quotes a schema name taken from configuration. */
export function ident(name: string): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`invalid schema name "${name}"`);
  return `"${name}"`;
}
