/**
 * OAuth 2.0 client credentials (POST /auth/token), the administration of clients (/admin/clients) and the public
 * keys (GET /.well-known/jwks.json).
 */
import type { Context } from "koa";
import { z } from "zod/v4";
import { conflict, notFound } from "../domain/errors.ts";
import { defineRoute, ErrorSchema, type HandlerResult, type RouteDefinition } from "../http/routeTable.ts";
import { isStorableText } from "../encoding/storableText.ts";
import { DateTime } from "../routes/schemas/common.ts";
import { SCOPES, type Principal, type Scope } from "./principal.ts";
import type { ClientRecord, ClientStore } from "./clients.ts";
import { field, lenientBody, NO_STORE, OAuthErrorSchema, oauthError } from "./oauthErrors.ts";
import type { TokenService } from "./tokens.ts";
import type { AuditEntry, RequestMeta } from "../stores/auditLog.ts";
import { requestMeta } from "../http/requestMeta.ts";
import type { FailedCredentials } from "../http/rateLimit.ts";
import type { FailedSignIn } from "./failedSignIns.ts";

const SCOPE_TABLE = [
  "| scope | opens |",
  "|---|---|",
  "| `applications:read` | view applications |",
  "| `applications:write` | submit and update applications |",
  "| `documents:read` | view documents |",
  "| `documents:write` | upload documents |",
  "| `verification:read` | verify certificates |",
  "| `admin` | administration; an admin token carries every scope |",
].join("\n");

const TokenRequest = lenientBody(
  "ClientCredentialsTokenRequest",
  "RFC 6749 §4.4 access token request (client credentials).",
  {
    grant_type: {
      description: "Must be `client_credentials`.",
      required: true,
      example: "client_credentials",
      enum: ["client_credentials"],
    },
    client_id: {
      description: "The client id (or send HTTP Basic authentication instead of client_id/client_secret).",
      required: true,
    },
    client_secret: { description: "The client secret.", required: true },
    scope: {
      description: "Space-separated scopes wanted; omitted: every scope the client holds.",
      example: "applications:read documents:read",
    },
  },
);

const TokenResponse = z
  .object({
    access_token: z.string().meta({ description: "ES256 JWT" }),
    token_type: z.literal("Bearer"),
    expires_in: z.int().meta({ example: 3600 }),
    scope: z.string().meta({ example: "applications:read documents:read" }),
  })
  .meta({ id: "ClientCredentialsTokenResponse" });

const ClientSchema = z
  .object({
    clientId: z.string(),
    name: z.string(),
    scopes: z.array(z.enum(SCOPES)),
    bootstrap: z.boolean().meta({
      description: "The admin client configured by ADMIN_CLIENT_ID / ADMIN_CLIENT_SECRET (cannot be revoked here).",
    }),
    createdAt: DateTime,
    revokedAt: DateTime.nullable(),
  })
  .meta({ id: "Client", description: "A system client; its secret is never shown again after creation." });

const CreatedClientSchema = z
  .object({
    clientId: z.string(),
    clientSecret: z.string().meta({ description: "Shown only in this response; store it now." }),
    name: z.string(),
    scopes: z.array(z.enum(SCOPES)),
    createdAt: DateTime,
  })
  .meta({ id: "CreatedClient" });

const CreateClientInput = z
  .object({
    name: z.string().trim().min(1).max(100),
    scopes: z.array(z.enum(SCOPES)).min(1).max(SCOPES.length),
  })
  .meta({ id: "CreateClientInput" });

const JwksSchema = z
  .object({
    keys: z.array(
      z.object({
        kty: z.string(),
        crv: z.string(),
        x: z.string(),
        y: z.string(),
        kid: z.string(),
        alg: z.string(),
        use: z.string(),
      }),
    ),
  })
  .meta({ id: "JsonWebKeySet" });

const errors = {
  401: { description: "Missing or invalid token", schema: ErrorSchema },
  403: { description: "The token lacks the admin scope", schema: ErrorSchema },
};

/** Writes an audit row (sign-ins, client changes). */
export type AuditRecorder = (meta: RequestMeta, entry: AuditEntry) => Promise<void>;

export function clientRoutes(deps: {
  clients: ClientStore;
  tokens: TokenService;
  record: AuditRecorder;
  failures?: FailedCredentials;
  failedSignIn: FailedSignIn;
}): RouteDefinition[] {
  const { clients, tokens, record } = deps;
  return [
    defineRoute({
      method: "post",
      path: "/auth/token",
      operationId: "issueClientToken",
      // Its response carries a secret: never stored for Idempotency-Key replays.
      idempotent: false,
      errorBody: "oauth",
      summary: "OAuth 2.0 client-credentials token",
      description: [
        "Issues an access token (ES256 JWT, lifetime ACCESS_TOKEN_TTL_SECONDS, 3600 s by default) to a system client.",
        "Client authentication: `client_id` and `client_secret` form fields, or HTTP Basic. The granted scope is the requested one (each must be held by the client; an admin client may request any) or, without `scope`, every scope the client holds.",
        SCOPE_TABLE,
        "Errors (RFC 6749 body `{error, error_description}`, `Cache-Control: no-store`): 400 `invalid_request` (not form-encoded, a parameter missing or repeated), 400 `unsupported_grant_type`, 401 `invalid_client` (client authentication failed: an unknown or revoked client id and a wrong secret get the same answer, or no client authentication), 400 `invalid_scope` (a scope unknown or not granted to the client).",
        "Failed client authentications are audited (without the secret) and counted per client id and address, and per address: past RATE_LIMIT_AUTH_PER_MINUTE the answer is 429 `RATE_LIMITED` with Retry-After (Error body).",
      ].join("\n\n"),
      tags: ["Authentication"],
      access: [{ kind: "public" }],
      body: TokenRequest,
      bodyType: "form",
      responses: {
        200: { description: "Token issued", schema: TokenResponse },
        400: {
          description: "invalid_request, unsupported_grant_type, invalid_scope",
          schema: OAuthErrorSchema,
        },
        401: { description: "invalid_client", schema: OAuthErrorSchema },
      },
      handler: ({ ctx }) => clientCredentials(ctx, deps),
    }),
    defineRoute({
      method: "post",
      path: "/admin/clients",
      operationId: "createClient",
      // Its response carries a secret: never stored for Idempotency-Key replays.
      idempotent: false,
      summary: "Create a system client",
      description:
        "Creates an OAuth 2.0 client for the client-credentials flow. The secret is returned once and stored only as a hash. Requires scope `admin`.\n\n" +
        SCOPE_TABLE,
      tags: ["Admin", "Authentication"],
      access: [{ kind: "admin" }],
      body: CreateClientInput,
      responses: {
        201: { description: "Created; the secret is shown only here", schema: CreatedClientSchema },
        400: { description: "Invalid input", schema: ErrorSchema },
        ...errors,
      },
      handler: async ({ body, ctx }) => {
        const { client, clientSecret } = await clients.create(body.name, body.scopes as Scope[]);
        await record(requestMeta(ctx), {
          entityType: "CLIENT",
          entityId: client.clientId,
          action: "CREATE",
          newValue: { name: client.name, scopes: client.scopes },
        });
        return {
          status: 201,
          headers: NO_STORE,
          body: {
            clientId: client.clientId,
            clientSecret,
            name: client.name,
            scopes: client.scopes,
            createdAt: client.createdAt.toISOString(),
          },
        };
      },
    }),
    defineRoute({
      method: "get",
      path: "/admin/clients",
      operationId: "listClients",
      summary: "List system clients",
      description:
        "Lists clients without their secrets; revoked ones only with `includeRevoked=true`. Requires scope `admin`.",
      tags: ["Admin", "Authentication"],
      access: [{ kind: "admin" }],
      query: z.object({
        includeRevoked: z
          .enum(["true", "false"])
          .optional()
          .meta({ description: "Also list revoked clients (default false)" }),
      }),
      responses: { 200: { description: "Clients", schema: z.object({ clients: z.array(ClientSchema) }) }, ...errors },
      handler: async ({ query }) => ({
        body: { clients: (await clients.list(query.includeRevoked === "true")).map(clientView) },
      }),
    }),
    defineRoute({
      method: "delete",
      path: "/admin/clients/:clientId",
      operationId: "revokeClient",
      summary: "Revoke a system client",
      description:
        "Revokes the client: its secret stops working and the tokens it already holds are refused (at once on this process, within 5 s on the others). Idempotent. The bootstrap admin client cannot be revoked (409 BOOTSTRAP_CLIENT): rotate ADMIN_CLIENT_SECRET instead. Requires scope `admin`.",
      tags: ["Admin", "Authentication"],
      access: [{ kind: "admin" }],
      params: z.object({ clientId: z.string().min(1).max(100) }),
      responses: {
        204: { description: "Revoked" },
        404: { description: "No such client", schema: ErrorSchema },
        409: { description: "The bootstrap admin client", schema: ErrorSchema },
        ...errors,
      },
      handler: async ({ params, ctx }) => {
        const client = await clients.find(params.clientId);
        if (!client) throw notFound("Client");
        if (client.bootstrap && !client.revokedAt) {
          throw conflict(
            "BOOTSTRAP_CLIENT",
            "The bootstrap admin client comes from ADMIN_CLIENT_ID / ADMIN_CLIENT_SECRET: rotate ADMIN_CLIENT_SECRET and restart instead",
          );
        }
        await clients.revoke(params.clientId);
        if (!client.revokedAt)
          await record(requestMeta(ctx), {
            entityType: "CLIENT",
            entityId: client.clientId,
            action: "REVOKE",
            oldValue: { name: client.name, scopes: client.scopes },
          });
        return { status: 204 };
      },
    }),
  ];
}

export function jwksRoute(tokens: TokenService): RouteDefinition {
  return defineRoute({
    method: "get",
    path: "/.well-known/jwks.json",
    operationId: "getJwks",
    summary: "Public keys of service tokens",
    description:
      "The ES256 public key(s) verifying the access tokens this service issues (match the token header's `kid`).",
    tags: ["Authentication"],
    access: [{ kind: "public" }],
    responses: { 200: { description: "JSON Web Key Set (RFC 7517)", schema: JwksSchema } },
    handler: () => ({ body: tokens.jwksDocument, headers: { "Cache-Control": "public, max-age=300" } }),
  });
}

function clientView(client: ClientRecord) {
  return {
    clientId: client.clientId,
    name: client.name,
    scopes: client.scopes,
    bootstrap: client.bootstrap,
    createdAt: client.createdAt.toISOString(),
    revokedAt: client.revokedAt?.toISOString() ?? null,
  };
}

async function clientCredentials(
  ctx: Context,
  deps: {
    clients: ClientStore;
    tokens: TokenService;
    record: AuditRecorder;
    failures?: FailedCredentials;
    failedSignIn: FailedSignIn;
  },
) {
  const { clients, tokens, record, failures, failedSignIn } = deps;
  const params = tokenRequestParams(ctx);
  if ("refused" in params) return params.refused;
  const credentials = clientAuthentication(ctx, params);
  if ("refused" in credentials) return credentials.refused;

  // A client id whose secret failed too often from this address is refused before its secret is checked.
  const credential = `client:${credentials.clientId}`;
  await failures?.admit(credential, ctx.ip);
  const check = await clients.authenticate(credentials.clientId, credentials.secret);
  if (!check.ok) {
    // One answer for an unknown id, a revoked one and a wrong secret: the endpoint tells nobody which ids exist.
    await failedSignIn(ctx, credential, {
      entityType: "CLIENT",
      claimed: credentials.clientId,
      method: "client_credentials",
      reason: check.reason,
    });
    return oauthError(
      "invalid_client",
      "The client credentials are invalid",
      credentials.basic ? { "WWW-Authenticate": 'Basic realm="token"' } : {},
    );
  }
  const scopes = grantedScopes(check.client.scopes, params.scope.value);
  if ("refused" in scopes) return scopes.refused;
  const granted = scopes.granted;
  const issued = await tokens.issueClient(check.client.clientId, granted);
  await record(
    {
      ...requestMeta(ctx),
      principal: { kind: "client", id: check.client.clientId, scopes: granted } satisfies Principal,
    },
    {
      entityType: "CLIENT",
      entityId: check.client.clientId,
      action: "SIGN_IN",
      newValue: { grantType: "client_credentials", scopes: granted },
    },
  );
  return {
    headers: { ...NO_STORE },
    body: {
      access_token: issued.accessToken,
      token_type: "Bearer",
      expires_in: issued.expiresIn,
      scope: granted.join(" "),
    },
  };
}

/** An OAuth error answer, where a step of the token request stops it. */
type Refused = { refused: HandlerResult };
type TokenParams = Record<"grant_type" | "client_id" | "client_secret" | "scope", { value?: string; problem?: string }>;

/** The token request's form fields, each once and a string, with grant_type client_credentials. */
function tokenRequestParams(ctx: Context): TokenParams | Refused {
  if (!ctx.request.is("application/x-www-form-urlencoded")) {
    return { refused: oauthError("invalid_request", "The body must be application/x-www-form-urlencoded") };
  }
  const body = (ctx.request as { body?: unknown }).body;
  const params = Object.fromEntries(
    ["grant_type", "client_id", "client_secret", "scope"].map((name) => [name, field(body, name)]),
  ) as TokenParams;
  const problem = Object.values(params).find((p) => p.problem)?.problem;
  if (problem) return { refused: oauthError("invalid_request", problem) };
  const grantType = params.grant_type.value;
  if (!grantType) return { refused: oauthError("invalid_request", "grant_type is required") };
  if (grantType !== "client_credentials")
    return { refused: oauthError("unsupported_grant_type", "Only grant_type=client_credentials is supported here") };
  return params;
}

/** The client's id and secret: from HTTP Basic or from the form, never both (RFC 6749 §2.3.1). */
function clientAuthentication(
  ctx: Context,
  params: TokenParams,
): { clientId: string; secret: string; basic: boolean } | Refused {
  let clientId = params.client_id.value;
  let secret = params.client_secret.value;
  const basic = basicCredentials(ctx.get("authorization"));
  if (basic === "malformed")
    return {
      refused: oauthError("invalid_client", "The Basic authorization header is malformed", {
        "WWW-Authenticate": 'Basic realm="token"',
      }),
    };
  if (basic) {
    if (secret)
      return {
        refused: oauthError(
          "invalid_request",
          "Use one client authentication method: HTTP Basic or client_secret, not both",
        ),
      };
    if (clientId && clientId !== basic.clientId)
      return { refused: oauthError("invalid_request", "client_id differs from the Basic authorization header") };
    ({ clientId, secret } = basic);
  }
  if (!clientId || !secret)
    return {
      refused: oauthError("invalid_client", "Client authentication is required (client_id and client_secret)"),
    };
  return { clientId, secret, basic: Boolean(basic) };
}

/** The scopes to grant: those asked for, each held by the client (an admin client holds every scope), else its own. */
function grantedScopes(held: Scope[], scope: string | undefined): { granted: Scope[] } | Refused {
  const holds: readonly Scope[] = held.includes("admin") ? SCOPES : held;
  const requested = scope?.split(" ").filter(Boolean);
  if (!requested || requested.length === 0) return { granted: held };
  const refused = requested.filter((s) => !(holds as readonly string[]).includes(s));
  if (refused.length > 0) {
    const unknown = refused.filter((s) => !(SCOPES as readonly string[]).includes(s));
    return {
      refused: oauthError(
        "invalid_scope",
        unknown.length > 0
          ? `Unknown scope: ${unknown.join(" ")}`
          : `Scope not authorised for this client: ${refused.join(" ")}`,
      ),
    };
  }
  return { granted: SCOPES.filter((s) => requested.includes(s)) };
}

/** RFC 6749 §2.3.1: Basic with form-urlencoded id and secret. Undefined when not Basic. */
function basicCredentials(header: string): { clientId: string; secret: string } | "malformed" | undefined {
  const match = /^Basic\s+(.*)$/i.exec(header);
  if (!match) return undefined;
  const decoded = Buffer.from(match[1].trim(), "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  if (colon <= 0) return "malformed";
  try {
    const decode = (s: string) => decodeURIComponent(s.replaceAll("+", " "));
    const credentials = { clientId: decode(decoded.slice(0, colon)), secret: decode(decoded.slice(colon + 1)) };
    // A NUL (or an unpaired surrogate) cannot be a client id: Postgres would refuse the lookup (a 500).
    return isStorableText(credentials.clientId) && isStorableText(credentials.secret) ? credentials : "malformed";
  } catch {
    return "malformed";
  }
}
