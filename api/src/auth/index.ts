/**
 * Authentication module. Contract:
 * - authenticate: bearer JWT (applicant or client) → Principal; X-API-Key + X-Department-Code → the department hook
 * - routes (under /api/v1), rootRoutes (at /): token endpoints, identity locker, admin clients, JWKS
 * - bootstrapAdmin: ensures the configured admin client exists
 *
 * Decisions (tokens, claims, error statuses) are in docs/decisions.md, section "Authentication".
 */
import type { Context } from "koa";
import type { Logger } from "pino";
import type pg from "pg";
import type { Config } from "../config.ts";
import { developmentSecret } from "../developmentSecrets.ts";
import { AppError } from "../domain/errors.ts";
import type { RouteDefinition } from "../http/routeTable.ts";
import { ClientStore } from "./clients.ts";
import { clientRoutes, jwksRoute } from "./clientRoutes.ts";
import { IdentityCodeStore } from "./codes.ts";
import { identityLockerRoutes, identityProviderOf } from "./identityLocker.ts";
import { loadSigningKey } from "./keys.ts";
import type { Authenticator, Principal } from "./principal.ts";
import { TokenRejected, TokenService } from "./tokens.ts";
import { audit, SYSTEM, type AuditEntry, type RequestMeta } from "../stores/auditLog.ts";
import type { FailedCredentials } from "../http/rateLimit.ts";
import { failedSignIns, type FailedSignIn, type SignInFailure } from "./failedSignIns.ts";
import { sha256Hex } from "./secrets.ts";

export type DepartmentKeyCheck = (
  apiKey: string,
  departmentCode: string,
  ctx: import("koa").Context,
) => Promise<Principal | undefined>;

/** A console session cookie's principal, or undefined (none, or not live); see consoleSessions.ts. */
export type ConsoleSessionCheck = (ctx: import("koa").Context) => Promise<Principal | undefined>;

export interface AuthModule {
  authenticate: Authenticator;
  /** Failed credentials, counted per credential and address: also for routes that check their own bearer token. */
  failures?: FailedCredentials;
  routes: RouteDefinition[];
  rootRoutes: RouteDefinition[];
  bootstrapAdmin(): Promise<{ clientId: string }>;
}

/** Routes of this module live under this prefix (app.ts's API_PREFIX). */
const API_PREFIX = "/api/v1";

export async function createAuth(deps: {
  config: Config;
  pool: pg.Pool;
  logger: Logger;
  departments?: DepartmentKeyCheck;
  /** Counts failed credentials per credential and address (none: not counted). */
  failures?: FailedCredentials;
  /** A review console session cookie → the reviewer's department (consoleSessions.ts); none: cookies are ignored. */
  consoleSessions?: ConsoleSessionCheck;
}): Promise<AuthModule> {
  const { config, pool, logger, failures } = deps;
  const key = await loadSigningKey(config);
  const provider = configuredIdentityProvider(config);
  const tokens = new TokenService(key, {
    issuer: config.jwtIssuer ?? config.publicBaseUrl!,
    audience: config.jwtAudience,
    ttlSeconds: config.accessTokenTtlSeconds,
    // Development sign-ins are accepted only where this process is the development provider.
    developmentIdentities: !provider,
  });
  const clients = new ClientStore(pool);
  const codes = new IdentityCodeStore(pool);
  logger.info(
    { kid: key.kid, identityProvider: provider ? new URL(provider.authorizeUrl).origin : "development" },
    "authentication ready",
  );

  // Sign-ins (failed ones too) and client changes are audited.
  const record = (meta: RequestMeta, entry: AuditEntry) => audit(pool, meta, entry);
  const failedSignIn = failedSignIns(record, failures);

  return {
    authenticate: authenticator({
      tokens,
      clients,
      departments: deps.departments,
      consoleSessions: deps.consoleSessions,
      failures,
      failedSignIn,
    }),
    ...authRoutes({ config, logger, clients, codes, tokens, provider, record, failures }),
    failures,
    bootstrapAdmin: () => bootstrapAdminClient(config, clients, record),
  };
}

/**
 * The identity provider the settings name, or none (the development provider), which is refused in production and
 * anywhere it was not explicitly enabled (fail closed).
 */
function configuredIdentityProvider(config: Config) {
  const provider = identityProviderOf(config, API_PREFIX);
  if (!provider && config.nodeEnv === "production") {
    throw new Error(
      "IDENTITY_PROVIDER_* settings are required in production: the development identity provider is refused",
    );
  }
  // Fail closed: the passwordless development provider only where it was explicitly enabled.
  if (!provider && !config.devConveniences)
    throw new Error(
      "IDENTITY_PROVIDER_* settings are required: the development identity provider is off (DEV_CONVENIENCES=true turns it on for a local stack)",
    );
  return provider;
}

/**
 * Who is calling: a bearer token's applicant or client, a department's API key, or nobody. A refused credential is
 * counted against itself (from this address) and the address; one spent from this address is refused unchecked.
 */
function authenticator(deps: {
  tokens: TokenService;
  clients: ClientStore;
  departments?: DepartmentKeyCheck;
  consoleSessions?: ConsoleSessionCheck;
  failures?: FailedCredentials;
  failedSignIn: FailedSignIn;
}): Authenticator {
  const { tokens, clients, departments, consoleSessions, failures, failedSignIn } = deps;
  async function bearerPrincipal(token: string): Promise<Principal> {
    if (!token) throw rejected('The Authorization header must be "Bearer <access token>"');
    let verified;
    try {
      verified = await tokens.verify(token);
    } catch (error) {
      if (error instanceof TokenRejected) throw rejected(error.message);
      throw error;
    }
    const { principal, claims } = verified;
    if (principal.kind === "client") {
      const status = await clients.tokenStatus(principal.id, claims.iat!);
      if (status === "revoked") throw rejected("The client of this access token has been revoked");
      if (status === "rotated") throw rejected("The client's secret was changed after this access token was issued");
    }
    return principal;
  }

  async function departmentPrincipal(apiKey: string, ctx: Context): Promise<Principal> {
    const code = ctx.get("x-department-code");
    if (!code) throw rejected("X-Department-Code is required with X-API-Key", "ApiKey");
    if (!departments) throw rejected("Department API keys are not accepted yet", "ApiKey");
    const principal = await departments(apiKey, code, ctx);
    if (!principal) throw rejected("The API key is not valid for this department", "ApiKey");
    return principal;
  }

  /** Runs a credential check; a 401 counts as a failure of `credential` (and, when given, is audited). */
  async function counted(
    ctx: Context,
    credential: string,
    check: () => Promise<Principal>,
    audited?: Omit<SignInFailure, "reason">,
  ): Promise<Principal> {
    await failures?.admit(credential, ctx.ip);
    try {
      return await check();
    } catch (error) {
      if (!(error instanceof AppError) || error.status !== 401) throw error;
      if (audited) await failedSignIn(ctx, credential, { ...audited, reason: error.message });
      else await failures?.failed(credential, ctx.ip);
      throw error;
    }
  }

  return async (ctx) => {
    const authorization = ctx.get("authorization");
    const apiKey = ctx.get("x-api-key");
    const bearer = /^Bearer(?:\s+(.*))?$/i.exec(authorization);
    if (bearer && apiKey) throw rejected("Send either a bearer token or X-API-Key, not both");
    if (bearer) {
      // A token is its own credential (its subject is unverified until it is checked): counted by its hash.
      const token = (bearer[1] ?? "").trim();
      return counted(ctx, `bearer:${sha256Hex(token).slice(0, 32)}`, () => bearerPrincipal(token));
    }
    if (apiKey) {
      const code = ctx.get("x-department-code");
      return counted(ctx, `apikey:${code}`, () => departmentPrincipal(apiKey, ctx), {
        entityType: "DEPARTMENT",
        claimed: code,
        method: "api_key",
      });
    }
    // A review console session cookie counts only without other credentials.
    if (consoleSessions) return consoleSessions(ctx);
    // No credentials (or another scheme, e.g. HTTP Basic at the token endpoint): anonymous.
    return undefined;
  };
}

/** Ensures the configured administrator client exists (generated in development only), auditing what changed. */
async function bootstrapAdminClient(
  config: Config,
  clients: ClientStore,
  record: (meta: RequestMeta, entry: AuditEntry) => Promise<void>,
): Promise<{ clientId: string }> {
  let clientId = config.adminClientId;
  let secret = config.adminClientSecret;
  if (!clientId || !secret) {
    if (config.nodeEnv === "production" || !config.devConveniences)
      throw new Error(
        "ADMIN_CLIENT_ID and ADMIN_CLIENT_SECRET are required (generated only with DEV_CONVENIENCES=true)",
      );
    // Same files as the supervisor (scripts/stack/stack.ts), so `node api/src/main.ts` alone finds the same client.
    clientId ??= `admin-${(await developmentSecret(config.dataDir, "admin-client-id", 6)).slice(2)}`;
    secret ??= (await developmentSecret(config.dataDir, "admin-client-secret", 24)).slice(2);
  }
  const changes = await clients.upsertBootstrapAdmin(clientId, secret);
  if (changes.created)
    await record(SYSTEM, {
      entityType: "CLIENT",
      entityId: clientId,
      action: "CREATE",
      newValue: { bootstrap: true, scopes: ["admin"] },
    });
  if (changes.rotated)
    await record(SYSTEM, { entityType: "CLIENT", entityId: clientId, action: "ROTATE", newValue: { bootstrap: true } });
  for (const revoked of changes.revoked)
    await record(SYSTEM, {
      entityType: "CLIENT",
      entityId: revoked,
      action: "REVOKE",
      newValue: { replacedBy: clientId },
    });
  return { clientId };
}

/** The module's routes: under /api/v1 (token endpoints, identity locker, admin clients) and at the root (JWKS). */
export function authRoutes(deps: {
  config: Config;
  logger: Logger;
  clients: ClientStore;
  codes: IdentityCodeStore;
  tokens: TokenService;
  provider: ReturnType<typeof identityProviderOf>;
  /** Writes an audit row (client changes, sign-ins). */
  record: (meta: RequestMeta, entry: AuditEntry) => Promise<void>;
  /** Counts failed credentials per credential and address (none: not counted). */
  failures?: FailedCredentials;
}): Pick<AuthModule, "routes" | "rootRoutes"> {
  const { config, logger, clients, codes, tokens, provider, record, failures } = deps;
  const failedSignIn = failedSignIns(record, failures);
  return {
    routes: [
      ...clientRoutes({ clients, tokens, record, failures, failedSignIn }),
      ...identityLockerRoutes({ config, logger, codes, tokens, provider, record, failedSignIn }),
    ],
    rootRoutes: [jwksRoute(tokens)],
  };
}

/** 401 UNAUTHORIZED in the Error shape, with the RFC 6750 challenge. The message never echoes the credentials. */
function rejected(message: string, scheme: "Bearer" | "ApiKey" = "Bearer"): AppError {
  const challenge =
    scheme === "Bearer"
      ? `Bearer error="invalid_token", error_description="${message.replaceAll('"', "'")}"`
      : "ApiKey";
  return new AppError(401, "UNAUTHORIZED", message, undefined, { "WWW-Authenticate": challenge });
}
