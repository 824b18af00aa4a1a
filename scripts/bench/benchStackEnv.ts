/**
 * The environment of a stack started for a benchmark: fresh free ports, embedded Postgres and chain, quiet logs,
 * and no rate limits or quotas (they would measure the limiter, not the platform).
 */
import { freePort } from "../stack/ports.ts";

export async function benchStackEnv(dataDir: string): Promise<Record<string, string>> {
  return {
    DATA_DIR: dataDir,
    PORT: String(await freePort()),
    CHAIN_PORT: String(await freePort()),
    EMBEDDED_PG_PORT: String(await freePort()),
    INDEXER_PORT: String(await freePort()),
    LOG_LEVEL: "warn",
    DATABASE_URL: "",
    CHAIN_RPC_URL: "",
    RATE_LIMIT_AUTH_PER_MINUTE: "0",
    RATE_LIMIT_WRITE_PER_MINUTE: "0",
    RATE_LIMIT_READ_PER_MINUTE: "0",
    RATE_LIMIT_PUBLIC_PER_MINUTE: "0",
    REQUEST_QUOTA_PER_DAY: "0",
  };
}
