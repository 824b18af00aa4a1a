/**
 * The benchmark's own stack (fresh data directory, free ports, no rate limits) and what every measurement needs:
 * HTTP helpers, an administrator and an applicant token, core services (the operator's signer, the pool), and
 * percentiles.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { loadConfig, type Config } from "../../api/src/config.ts";
import { createLogger } from "../../api/src/observability/logger.ts";
import { createCoreServices, type CoreServices } from "../../api/src/services.ts";
import { freePort } from "../stack/ports.ts";
import { startStack, type Stack } from "../stack/stack.ts";

export type Json = Record<string, any>;

export interface BenchEnvironment {
  stack: Stack;
  config: Config;
  core: CoreServices;
  api: string;
  adminToken: string;
  applicantToken: string;
  applicantId: string;
  request(method: string, route: string, token: string | undefined, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; body: Json }>;
  close(): Promise<void>;
}

export async function startBenchEnvironment(): Promise<BenchEnvironment> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), "bench-"));
  const env = {
    DATA_DIR: dataDir, PORT: String(await freePort()), CHAIN_PORT: String(await freePort()), EMBEDDED_PG_PORT: String(await freePort()),
    INDEXER_PORT: String(await freePort()), LOG_LEVEL: "warn", DATABASE_URL: "", CHAIN_RPC_URL: "",
    RATE_LIMIT_AUTH_PER_MINUTE: "0", RATE_LIMIT_WRITE_PER_MINUTE: "0", RATE_LIMIT_PUBLIC_PER_MINUTE: "0", REQUEST_QUOTA_PER_DAY: "0",
    // Snapshots of a chain with 100k+ transactions are large: only at the clean stop.
    CHAIN_SNAPSHOT_MS: "3600000",
  };
  const stack = await startStack({ env, log: () => {} });
  const config = loadConfig(stack.env);
  const core = await createCoreServices(config, createLogger("silent"));
  const api = `${stack.api.url}/api/v1`;
  const request: BenchEnvironment["request"] = async (method, route, token, body, headers = {}) => {
    const response = await fetch(`${api}${route}`, {
      method,
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body !== undefined ? { "content-type": "application/json" } : {}), ...headers },
      body: body !== undefined ? JSON.stringify(body) : undefined,
    });
    const text = await response.text();
    return { status: response.status, body: text ? (JSON.parse(text) as Json) : {} };
  };
  const adminToken = ((await (await fetch(`${api}/auth/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ grant_type: "client_credentials", client_id: stack.admin.clientId, client_secret: stack.admin.clientSecret, scope: "admin" }),
  })).json()) as Json).access_token as string;
  const applicantId = "bench-applicant";
  const login = await fetch(`${api}/auth/identitylocker/authorize?${new URLSearchParams({ client_id: "demo", code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM", code_challenge_method: "S256", redirect_uri: "http://127.0.0.1:9/cb", state: "s", login_hint: applicantId, name: "Ben Chmark" })}`, { redirect: "manual" });
  const code = new URL(login.headers.get("location")!).searchParams.get("code");
  const applicantToken = ((await request("POST", "/auth/identitylocker/token", undefined, { code, client_id: "demo", code_verifier: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk", redirect_uri: "http://127.0.0.1:9/cb" })).body).access_token as string;
  return {
    stack, config, core, api, adminToken, applicantToken, applicantId, request,
    async close() {
      await core.close();
      await stack.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/** Runs `task` `total` times with `concurrency` workers; returns the wall time in ms. */
export async function runConcurrently(total: number, concurrency: number, task: (i: number) => Promise<void>, progress?: (done: number) => void): Promise<number> {
  let next = 0;
  let done = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        const i = next++;
        await task(i);
        done++;
        if (progress && done % Math.max(1, Math.floor(total / 10)) === 0) progress(done);
      }
    }),
  );
  return performance.now() - started;
}

export const say = (line: string) => console.log(`  ${line}`);

/** A JSON-RPC call or batch straight to the node; a single call's error is thrown (a batch's are the caller's). */
export async function jsonRpc(url: string, body: unknown): Promise<any> {
  const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  const json = await response.json();
  if (!Array.isArray(json) && json.error) throw new Error(`${JSON.stringify(body).slice(0, 100)}: ${JSON.stringify(json.error)}`);
  return json;
}

/** Reserves `count` token ids from the API's sequence (for tokens minted behind its back); returns the first. */
export async function reserveTokenIds(env: BenchEnvironment, count: number): Promise<bigint> {
  const { rows } = await env.core.pool.query(`SELECT setval('token_ids', nextval('token_ids') + $1) - $1 + 1 AS first`, [count]);
  return BigInt(rows[0].first);
}
