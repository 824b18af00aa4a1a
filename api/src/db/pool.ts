/** The API's Postgres pool: its own schema first on the search path, the index views readable by name. */
import pg from "pg";

// bigint columns (nonces, block numbers, gas) arrive as strings; callers convert where they need numbers.
export function createPool(connectionString: string, schema: string, max = 20): pg.Pool {
  const pool = new pg.Pool({ connectionString, max, options: `-c search_path=${schema},public`, connectionTimeoutMillis: 5_000 });
  // A dropped connection (e.g. Postgres restarting) must not crash the process: the pool replaces idle clients,
  // and a client checked out at that moment fails its query, is not queryable any more, and is discarded on release.
  pool.on("error", () => {});
  pool.on("connect", (client) => client.on("error", () => {}));
  return pool;
}
