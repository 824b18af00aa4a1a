/**
 * Applicant sign-in through the identity locker.
 *
 * GET /auth/identitylocker/authorize?redirect_uri&state → 302 to the provider (or, without IDENTITY_PROVIDER_*,
 * straight back with a code from the built-in development provider) → the applicant's redirect_uri receives our
 * single-use `code` and the original `state` → POST /auth/identitylocker/token {code, redirect_uri} → access token.
 *
 * With a provider configured this is an OAuth 2.0 / OIDC authorization-code flow with PKCE: our callback receives
 * the provider's code, exchanges it at IDENTITY_PROVIDER_TOKEN_URL (client_secret_post), reads sub/name/email at
 * IDENTITY_PROVIDER_USERINFO_URL, then issues our own code.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { Context } from "koa";
import type { Logger } from "pino";
import { z } from "zod/v4";
import type { Config } from "../config.ts";
import { forbidden, notFound, unauthorized } from "../domain/errors.ts";
import { defineRoute, ErrorSchema, type HandlerResult, type RouteDefinition } from "../http/routeTable.ts";
import { CODE_TTL_SECONDS, type IdentityCodeStore } from "./codes.ts";
import { bodyShapeProblem, field, lenientBody, NO_STORE, OAuthErrorSchema, oauthError } from "./oauthErrors.ts";
import { redirectUriProblem, registeredRedirects, type RegisteredRedirect } from "./redirectUris.ts";
import { randomSecret } from "./secrets.ts";
import type { ApplicantIdentity, TokenService } from "./tokens.ts";
import { requestMeta } from "../http/requestMeta.ts";
import type { AuditRecorder } from "./clientRoutes.ts";
import type { FailedSignIn } from "./failedSignIns.ts";
import type { Principal } from "./principal.ts";

const PROVIDER_TIMEOUT_MS = 10_000;
const RFC_AUTHORIZE_ERRORS = new Set([
  "invalid_request",
  "unauthorized_client",
  "access_denied",
  "unsupported_response_type",
  "invalid_scope",
  "server_error",
  "temporarily_unavailable",
  "login_required",
  "consent_required",
  "interaction_required",
]);

export interface IdentityProvider {
  authorizeUrl: string;
  tokenUrl: string;
  userinfoUrl: string;
  clientId: string;
  clientSecret?: string;
  /** Our callback, registered at the provider. */
  callbackUrl: string;
}

/** The configured provider, or undefined for the development provider; throws when the settings are incomplete. */
export function identityProviderOf(config: Config, apiPrefix: string): IdentityProvider | undefined {
  if (!config.identityProviderAuthorizeUrl) return undefined;
  const missing = [
    ["IDENTITY_PROVIDER_TOKEN_URL", config.identityProviderTokenUrl],
    ["IDENTITY_PROVIDER_USERINFO_URL", config.identityProviderUserinfoUrl],
    ["IDENTITY_PROVIDER_CLIENT_ID", config.identityProviderClientId],
  ]
    .filter(([, value]) => !value)
    .map(([name]) => name);
  if (missing.length > 0)
    throw new Error(
      `IDENTITY_PROVIDER_AUTHORIZE_URL is set but ${missing.join(", ")} ${missing.length > 1 ? "are" : "is"} not`,
    );
  return {
    authorizeUrl: config.identityProviderAuthorizeUrl,
    tokenUrl: config.identityProviderTokenUrl!,
    userinfoUrl: config.identityProviderUserinfoUrl!,
    clientId: config.identityProviderClientId!,
    clientSecret: config.identityProviderClientSecret,
    callbackUrl: `${config.publicBaseUrl}${apiPrefix}/auth/identitylocker/callback`,
  };
}

const AuthorizeQuery = z.object({
  client_id: z.string().min(1).max(200).meta({
    description:
      "The applicant client (as registered with its redirect URIs in REDIRECT_URI_ALLOWLIST); the code is bound to it.",
  }),
  redirect_uri: z.string().min(1).max(2000).meta({
    description:
      "Where the applicant returns with `code` and `state`; exactly a URI registered for client_id (REDIRECT_URI_ALLOWLIST; any loopback http URI with DEV_CONVENIENCES).",
  }),
  code_challenge: z
    .string()
    .regex(/^[\w-]{43}$/, "a base64url SHA-256 (43 characters)")
    .meta({
      description: "PKCE (RFC 7636): BASE64URL(SHA-256(code_verifier)); the exchange must present the verifier.",
    }),
  code_challenge_method: z.literal("S256").meta({ description: "Only S256." }),
  state: z
    .string()
    .min(1)
    .max(1000)
    .meta({ description: "Opaque value returned unchanged with the code (CSRF protection)." }),
  login_hint: z
    .string()
    .regex(/^[\w.:@+-]{1,128}$/)
    .optional()
    .meta({
      description:
        "Development provider: the identity-locker id to sign in (required there). Passed on to a real provider as OIDC login_hint.",
    }),
  name: z.string().min(1).max(200).optional().meta({ description: "Development provider only: the applicant's name." }),
  email: z.email().max(320).optional().meta({ description: "Development provider only: the applicant's email." }),
});

const CallbackQuery = z.object({
  state: z.string().min(1).max(1000),
  code: z.string().min(1).max(4000).optional(),
  error: z.string().max(200).optional(),
  error_description: z.string().max(2000).optional(),
});

const CodeTokenRequest = lenientBody(
  "IdentityLockerTokenRequest",
  "Exchange of our identity-locker code (JSON; form-encoded is accepted too).",
  {
    code: { description: "The code received at redirect_uri (single use, valid 60 s).", required: true, minLength: 1 },
    redirect_uri: { description: "The redirect_uri used at authorize, exactly.", required: true, minLength: 1 },
    client_id: { description: "The client_id used at authorize.", required: true, minLength: 1 },
    code_verifier: {
      description: "The PKCE verifier whose S256 challenge was sent at authorize.",
      required: true,
      minLength: 1,
    },
    grant_type: { description: "Optional; when sent it must be `authorization_code`.", enum: ["authorization_code"] },
  },
);

const CodeTokenResponse = z
  .object({
    access_token: z.string().meta({ description: "ES256 JWT" }),
    token_type: z.literal("Bearer"),
    expires_in: z.int().meta({ example: 3600 }),
  })
  .meta({ id: "ApplicantTokenResponse" });

export function identityLockerRoutes(deps: {
  config: Config;
  logger: Logger;
  codes: IdentityCodeStore;
  tokens: TokenService;
  provider: IdentityProvider | undefined;
  record: AuditRecorder;
  /** Counts and audits a refused sign-in (none: neither). */
  failedSignIn?: FailedSignIn;
}): RouteDefinition[] {
  const { config, codes, tokens, provider } = deps;
  const failedSignIn: FailedSignIn = deps.failedSignIn ?? (async () => {});
  const production = config.nodeEnv === "production";
  const registered = registeredRedirects(config.redirectUriAllowlist);
  const allowLoopback = !production && config.devConveniences;

  return [
    defineRoute({
      method: "get",
      path: "/auth/identitylocker/authorize",
      operationId: "identityLockerAuthorize",
      summary: "Start an applicant sign-in (identity locker)",
      description: [
        "Redirects (302) the applicant's browser to the identity locker; after sign-in the applicant returns to `redirect_uri` with `code` and `state` (or `error`, `error_description` and `state`). The code is exchanged at POST /auth/identitylocker/token.",
        "Without IDENTITY_PROVIDER_* settings a development provider signs in the user named by `login_hint` (with optional `name` and `email`) without a password and redirects back at once; it exists only with DEV_CONVENIENCES=true (a local stack; refused in production).",
        "A redirect_uri that is not allowed is answered 403 FORBIDDEN here, never redirected to.",
      ].join("\n\n"),
      tags: ["Authentication"],
      access: [{ kind: "public" }],
      query: AuthorizeQuery,
      responses: {
        302: { description: "Redirect to the identity provider, or back to redirect_uri" },
        400: { description: "Invalid query", schema: ErrorSchema },
        403: { description: "redirect_uri not allowed; development provider in production", schema: ErrorSchema },
      },
      handler: async ({ query, ctx }) => {
        // Refused sign-ins are audited (counted per applicant client and address first).
        const refuse = (reason: string) =>
          failedSignIn(ctx, `authorize:${query.client_id}`, {
            entityType: "APPLICANT",
            claimed: query.login_hint,
            method: provider ? "identity_locker" : "development",
            reason,
          });
        const problem = redirectUriProblem(query.client_id, query.redirect_uri, registered, allowLoopback);
        if (problem) {
          await refuse(`redirect_uri is not allowed: ${problem}`);
          throw forbidden(`redirect_uri is not allowed: ${problem}`);
        }
        if (provider) {
          const codeVerifier = randomSecret(32);
          const state = await codes.startLogin({
            redirectUri: query.redirect_uri,
            clientId: query.client_id,
            codeChallenge: query.code_challenge,
            clientState: query.state,
            codeVerifier,
          });
          const target = new URL(provider.authorizeUrl);
          target.searchParams.set("response_type", "code");
          target.searchParams.set("client_id", provider.clientId);
          target.searchParams.set("redirect_uri", provider.callbackUrl);
          target.searchParams.set("scope", "openid profile email");
          target.searchParams.set("state", state);
          target.searchParams.set("code_challenge", createHash("sha256").update(codeVerifier).digest("base64url"));
          target.searchParams.set("code_challenge_method", "S256");
          if (query.login_hint) target.searchParams.set("login_hint", query.login_hint);
          return redirect(target.href);
        }
        if (production || !config.devConveniences) {
          await refuse("the development identity provider is off");
          throw forbidden(
            "The development identity provider is off: configure IDENTITY_PROVIDER_* (or DEV_CONVENIENCES=true for a local stack)",
          );
        }
        if (!query.login_hint) {
          await refuse("login_hint is missing");
          return redirect(
            withParams(query.redirect_uri, {
              error: "login_required",
              error_description:
                "The development identity provider needs login_hint (the identity-locker id to sign in)",
              state: query.state,
            }),
          );
        }
        const identity: ApplicantIdentity = { id: query.login_hint, idp: "development" };
        if (query.name) identity.name = query.name;
        if (query.email) identity.email = query.email;
        const code = await codes.issueCode(identity, {
          redirectUri: query.redirect_uri,
          clientId: query.client_id,
          codeChallenge: query.code_challenge,
        });
        return redirect(withParams(query.redirect_uri, { code, state: query.state }));
      },
    }),
    defineRoute({
      method: "get",
      path: "/auth/identitylocker/callback",
      operationId: "identityLockerCallback",
      summary: "Identity provider callback",
      description:
        "Where the identity locker returns the applicant (register this URL at the provider: PUBLIC_BASE_URL/api/v1/auth/identitylocker/callback). Exchanges the provider's code, reads the user's sub, name and email, and redirects (302) to the applicant's redirect_uri with our code and the original state, or with `error` (access_denied, server_error...). 401 when the sign-in is unknown, expired (10 min) or already completed; 404 when no provider is configured.",
      tags: ["Authentication"],
      access: [{ kind: "public" }],
      query: CallbackQuery,
      responses: {
        302: { description: "Back to the applicant's redirect_uri" },
        401: { description: "Unknown, expired or completed sign-in", schema: ErrorSchema },
        404: { description: "No identity provider configured", schema: ErrorSchema },
      },
      handler: async ({ query, ctx }) => {
        if (!provider) throw notFound("Identity provider (none is configured)");
        const login = await codes.finishLogin(query.state);
        if (!login) throw unauthorized("The sign-in is unknown, expired or already completed: start again");
        const back = (params: Record<string, string>) =>
          redirect(withParams(login.redirectUri, { ...params, state: login.clientState }));
        if (query.error || !query.code) {
          const error = query.error && RFC_AUTHORIZE_ERRORS.has(query.error) ? query.error : "access_denied";
          return back({ error, error_description: "The identity provider did not sign the user in" });
        }
        let identity: ApplicantIdentity;
        try {
          identity = await fetchIdentity(provider, query.code, login.codeVerifier);
        } catch (error) {
          ctx.state.log?.warn({ reason: (error as Error).message }, "identity provider sign-in failed");
          return back({
            error: "server_error",
            error_description: "The identity provider could not complete the sign-in",
          });
        }
        const code = await codes.issueCode(identity, login);
        return back({ code });
      },
    }),
    defineRoute({
      method: "post",
      path: "/auth/identitylocker/token",
      operationId: "identityLockerToken",
      // Its response carries a secret: never stored for Idempotency-Key replays.
      idempotent: false,
      errorBody: "oauth",
      summary: "Exchange an identity-locker code for an applicant token",
      description: [
        `Exchanges the single-use code (valid ${CODE_TTL_SECONDS} s) received at redirect_uri for an applicant access token (ES256 JWT; claims sub = identity-locker id, name, email). redirect_uri must be exactly the one used at authorize.`,
        "Errors (RFC 6749 body `{error, error_description}`, all 400): `invalid_request` (code, redirect_uri, client_id or code_verifier missing or empty: the answer names the empty ones; body neither JSON nor form), `unsupported_grant_type`, `invalid_grant` (unknown or already used code, redirect_uri mismatch), `expired_token` (the code has expired). A code is consumed by its first exchange, even a failed one.",
      ].join("\n\n"),
      tags: ["Authentication"],
      access: [{ kind: "public" }],
      body: CodeTokenRequest,
      responses: {
        200: { description: "Applicant token", schema: CodeTokenResponse },
        400: {
          description: "invalid_request, unsupported_grant_type, invalid_grant, expired_token",
          schema: OAuthErrorSchema,
        },
      },
      handler: ({ ctx }) => exchangeCode(ctx, { ...deps, registered, allowLoopback, failedSignIn }),
    }),
  ];
}

async function exchangeCode(
  ctx: Context,
  deps: { codes: IdentityCodeStore; tokens: TokenService; record: AuditRecorder; failedSignIn: FailedSignIn } & {
    registered: RegisteredRedirect[];
    allowLoopback: boolean;
  },
): Promise<HandlerResult> {
  const { codes, tokens, registered, allowLoopback, record, failedSignIn } = deps;
  if (!ctx.request.is("application/json", "application/x-www-form-urlencoded")) {
    return oauthError("invalid_request", "The body must be JSON (or application/x-www-form-urlencoded)");
  }
  const body = (ctx.request as { body?: unknown }).body;
  const shape = bodyShapeProblem(body);
  if (shape) return oauthError("invalid_request", shape);
  const fields = ["code", "redirect_uri", "grant_type", "client_id", "code_verifier"].map((name) => field(body, name));
  const [code, redirectUri, grantType, clientId, verifier] = fields;
  const problem = fields.find((f) => f.problem)?.problem;
  if (problem) return oauthError("invalid_request", problem);
  if (grantType.value && grantType.value !== "authorization_code")
    return oauthError("unsupported_grant_type", "Only grant_type=authorization_code is supported here");
  // An empty field is named as such (it was sent), before the first one missing.
  const empty = EXCHANGE_FIELDS.filter((name) => (body as Record<string, unknown> | undefined)?.[name] === "");
  if (empty.length > 0)
    return oauthError(
      "invalid_request",
      `${listed(empty)} ${empty.length === 1 ? "is" : "are"} empty: send at least 1 character`,
    );
  if (!code.value) return oauthError("invalid_request", "code is required");
  if (!redirectUri.value) return oauthError("invalid_request", "redirect_uri is required");
  if (!clientId.value) return oauthError("invalid_request", "client_id is required");
  if (!verifier.value) return oauthError("invalid_request", "code_verifier is required (PKCE, S256)");

  // A refused code is audited (counted per code and address first; the code itself is never written).
  const refused = async (error: "invalid_grant" | "expired_token", message: string, applicant?: string) => {
    await failedSignIn(ctx, `code:${createHash("sha256").update(code.value!).digest("hex").slice(0, 32)}`, {
      entityType: "APPLICANT",
      claimed: applicant,
      method: "authorization_code",
      reason: message,
    });
    return oauthError(error, message);
  };
  const redemption = await codes.redeemCode(code.value);
  if (!redemption.ok) {
    return redemption.reason === "expired"
      ? refused("expired_token", "The code has expired: sign in again")
      : refused("invalid_grant", "The code is invalid or has already been used");
  }
  const applicant = redemption.identity.id;
  if (redemption.redirectUri !== redirectUri.value)
    return refused("invalid_grant", "redirect_uri does not match the one used at authorize", applicant);
  if (!sameSecret(redemption.clientId, clientId.value))
    return refused("invalid_grant", "The code was issued to another client_id", applicant);
  const challenge = createHash("sha256").update(verifier.value).digest("base64url");
  if (!redemption.codeChallenge || !sameSecret(redemption.codeChallenge, challenge))
    return refused("invalid_grant", "code_verifier does not match the code_challenge sent at authorize", applicant);
  if (redirectUriProblem(clientId.value, redirectUri.value, registered, allowLoopback))
    return refused("invalid_grant", "redirect_uri is no longer allowed", applicant);
  const issued = await tokens.issueApplicant(redemption.identity);
  await record(
    { ...requestMeta(ctx), principal: { kind: "applicant", id: redemption.identity.id } as Principal },
    {
      entityType: "APPLICANT",
      entityId: redemption.identity.id,
      action: "SIGN_IN",
      newValue: { idp: redemption.identity.idp, clientId: redemption.clientId },
    },
  );
  return {
    headers: { ...NO_STORE },
    body: { access_token: issued.accessToken, token_type: "Bearer", expires_in: issued.expiresIn },
  };
}

/** The fields of the code exchange that must not be empty. */
const EXCHANGE_FIELDS = ["code", "redirect_uri", "client_id", "code_verifier"] as const;

/** "a", "a and b", "a, b and c". */
function listed(names: readonly string[]): string {
  return names.length === 1 ? names[0] : `${names.slice(0, -1).join(", ")} and ${names.at(-1)}`;
}

/** Provider's code → its access token (PKCE, client_secret_post) → userinfo (sub, name, email). */
async function fetchIdentity(
  provider: IdentityProvider,
  code: string,
  codeVerifier: string,
): Promise<ApplicantIdentity> {
  const form = new URLSearchParams({
    grant_type: "authorization_code",
    code,
    redirect_uri: provider.callbackUrl,
    client_id: provider.clientId,
    code_verifier: codeVerifier,
  });
  if (provider.clientSecret) form.set("client_secret", provider.clientSecret);
  const tokenResponse = await fetch(provider.tokenUrl, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
    body: form,
    signal: AbortSignal.timeout(PROVIDER_TIMEOUT_MS),
    redirect: "error",
  });
  const tokenBody = (await tokenResponse.json().catch(() => undefined)) as
    { access_token?: unknown; error?: unknown } | undefined;
  if (!tokenResponse.ok || typeof tokenBody?.access_token !== "string") {
    throw new Error(
      `token endpoint answered ${tokenResponse.status}${typeof tokenBody?.error === "string" ? ` ${tokenBody.error}` : ""}`,
    );
  }
  const userinfoResponse = await fetch(provider.userinfoUrl, {
    headers: { authorization: `Bearer ${tokenBody.access_token}`, accept: "application/json" },
    signal: AbortSignal.timeout(PROVIDER_TIMEOUT_MS),
    redirect: "error",
  });
  const user = (await userinfoResponse.json().catch(() => undefined)) as
    { sub?: unknown; name?: unknown; email?: unknown } | undefined;
  if (!userinfoResponse.ok || typeof user?.sub !== "string" || user.sub.length === 0 || user.sub.length > 255) {
    throw new Error(`userinfo endpoint answered ${userinfoResponse.status} without a usable sub`);
  }
  const identity: ApplicantIdentity = { id: user.sub, idp: "identity-locker" };
  if (typeof user.name === "string" && user.name) identity.name = user.name.slice(0, 200);
  if (typeof user.email === "string" && user.email) identity.email = user.email.slice(0, 320);
  return identity;
}

function redirect(location: string): HandlerResult {
  return { status: 302, headers: { Location: location, ...NO_STORE } };
}

function withParams(uri: string, params: Record<string, string>): string {
  const url = new URL(uri);
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
  return url.href;
}

/** Constant-time string comparison (the challenge and client id are compared like secrets). */
function sameSecret(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
