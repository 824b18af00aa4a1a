/**
 * The environment of a production API beside the fixture stack (same database and chain): every secret given
 * explicitly from the fixture's generated ones, a real identity provider configured, no development conveniences.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import type { Stack } from "../../../scripts/stack/stack.ts";

/** The fixture's generated secrets, given explicitly: what a process without DEV_CONVENIENCES must be told. */
export async function explicitSecrets(stack: Stack): Promise<NodeJS.ProcessEnv> {
  const secretFile = (name: string) =>
    readFile(path.join(stack.config.dataDir, "secrets", name), "utf8").then((t) => t.trim());
  return {
    MASTER_KEY: await secretFile("master.key"),
    JWT_PRIVATE_KEY: (await secretFile("jwt-signing-key.pem")).replaceAll("\n", "\\n"),
    CUSTODY_SECRET: await secretFile("custody.key"),
    ISSUER_PRIVATE_KEY: await secretFile("issuer.key"),
    FILE_URL_SECRET: await secretFile("file-url.key"),
  };
}

export async function productionEnv(stack: Stack, extra: NodeJS.ProcessEnv = {}): Promise<NodeJS.ProcessEnv> {
  return {
    NODE_ENV: "production",
    DEV_CONVENIENCES: "false",
    PUBLIC_BASE_URL: "https://licences.example.org",
    // The fixture's issuer, so tokens it issued are accepted here too.
    JWT_ISSUER: stack.config.jwtIssuer ?? stack.config.publicBaseUrl,
    ...(await explicitSecrets(stack)),
    IDENTITY_PROVIDER_AUTHORIZE_URL: "https://id.example.org/authorize",
    IDENTITY_PROVIDER_TOKEN_URL: "https://id.example.org/token",
    IDENTITY_PROVIDER_USERINFO_URL: "https://id.example.org/userinfo",
    IDENTITY_PROVIDER_CLIENT_ID: "licence-platform",
    REDIRECT_URI_ALLOWLIST: "https://portal.example/cb",
    JOB_TIME_SCALE: "1",
    JOBS_IN_API: "false",
    // Production serves /metrics only to its scraper.
    METRICS_TOKEN: "production-metrics-scraper-token",
    // Governance is a Safe in production: this API holds no governance key (the stack's development one is refused).
    GOVERNANCE_PRIVATE_KEY: "",
    ...extra,
  };
}
