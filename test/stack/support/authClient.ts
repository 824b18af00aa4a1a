/**
 * Tokens for tests, obtained over HTTP like any client would:
 * - applicantToken: the development identity-locker sign-in (authorize with login_hint, client_id and a PKCE S256
 *   challenge → code → token exchange with the client_id and the verifier);
 * - clientToken: OAuth 2.0 client credentials.
 * And lockerApplicantToken: what a sign-in through a real identity provider leaves, for API processes that have one.
 */
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { loadConfig } from "../../../api/src/config.ts";
import { loadSigningKey } from "../../../api/src/auth/keys.ts";
import { TokenService } from "../../../api/src/auth/tokens.ts";
import type { Stack } from "../../../scripts/stack/stack.ts";

/** A loopback redirect_uri: allowed with DEV_CONVENIENCES; nothing needs to listen there (the redirect is not followed). */
export const TEST_REDIRECT_URI = "http://127.0.0.1:9/auth/callback";
/** The applicant client the tests sign in as. */
export const TEST_CLIENT_ID = "test-portal";

/** A PKCE pair (RFC 7636, S256). */
export function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString("base64url");
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") };
}

/** The verifier of each code this helper obtained, for the exchange. */
const verifiers = new Map<string, string>();

/** Authorize query parameters for the test client: client_id and a fresh PKCE challenge (its verifier is returned). */
export function authorizeParams(
  params: Record<string, string>,
  clientId = TEST_CLIENT_ID,
): { query: URLSearchParams; verifier: string } {
  const { verifier, challenge } = pkce();
  return {
    query: new URLSearchParams({
      client_id: clientId,
      code_challenge: challenge,
      code_challenge_method: "S256",
      ...params,
    }),
    verifier,
  };
}

/** The token request body for a code this helper obtained (client_id, code_verifier, redirect_uri). */
export function exchangeFields(code: string, redirectUri = TEST_REDIRECT_URI): Record<string, string> {
  return {
    code,
    redirect_uri: redirectUri,
    client_id: TEST_CLIENT_ID,
    code_verifier: verifiers.get(code) ?? "unknown-verifier-000000000000000000000000000",
  };
}

/** Remembers the verifier of a code obtained by hand (from authorizeParams). */
export function rememberVerifier(code: string, verifier: string): void {
  verifiers.set(code, verifier);
}

export interface ApplicantLogin {
  /** identity-locker id (the token's sub); letters, digits and . _ : @ + - (max 128). */
  id: string;
  name?: string;
  email?: string;
}

/** Signs `applicant` in through the development identity provider and returns the access token. */
export async function applicantToken(apiUrl: string, applicant: ApplicantLogin): Promise<string> {
  const code = await applicantCode(apiUrl, applicant);
  const response = await fetch(`${apiUrl}/api/v1/auth/identitylocker/token`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(exchangeFields(code)),
  });
  const body = (await response.json()) as { access_token?: string; error?: string; error_description?: string };
  if (!response.ok || !body.access_token)
    throw new Error(`code exchange failed: ${response.status} ${body.error}: ${body.error_description}`);
  return body.access_token;
}

/**
 * An applicant token as a sign-in through a real identity locker issues it (idp "identity-locker"), signed with the
 * stack's key for its issuer: API processes configured with a real identity provider (the production ones next to
 * the fixture) refuse the development sign-in's tokens, and no test identity provider is needed to sign in there.
 */
export async function lockerApplicantToken(stack: Stack, applicant: ApplicantLogin): Promise<string> {
  const config = loadConfig(stack.env);
  const tokens = new TokenService(await loadSigningKey(config), {
    issuer: config.jwtIssuer!,
    audience: config.jwtAudience,
    ttlSeconds: 600,
  });
  const issued = await tokens.issueApplicant({ ...applicant, idp: "identity-locker" });
  return issued.accessToken;
}

/** The authorize step alone: returns our single-use code (valid 60 s) for `redirectUri`. */
export async function applicantCode(
  apiUrl: string,
  applicant: ApplicantLogin,
  redirectUri = TEST_REDIRECT_URI,
): Promise<string> {
  const { query, verifier } = authorizeParams({
    redirect_uri: redirectUri,
    state: randomUUID(),
    login_hint: applicant.id,
  });
  if (applicant.name) query.set("name", applicant.name);
  if (applicant.email) query.set("email", applicant.email);
  const response = await fetch(`${apiUrl}/api/v1/auth/identitylocker/authorize?${query}`, { redirect: "manual" });
  const location = response.headers.get("location");
  if (response.status !== 302 || !location)
    throw new Error(`authorize failed: ${response.status} ${await response.text()}`);
  const back = new URL(location);
  const code = back.searchParams.get("code");
  if (!code)
    throw new Error(
      `authorize returned no code: ${back.searchParams.get("error")}: ${back.searchParams.get("error_description")}`,
    );
  verifiers.set(code, verifier);
  return code;
}

/** Client-credentials token; `scope` is space separated (omitted: every scope the client holds). */
export async function clientToken(
  apiUrl: string,
  clientId: string,
  clientSecret: string,
  scope?: string,
): Promise<string> {
  const form = new URLSearchParams({
    grant_type: "client_credentials",
    client_id: clientId,
    client_secret: clientSecret,
  });
  if (scope) form.set("scope", scope);
  const response = await fetch(`${apiUrl}/api/v1/auth/token`, { method: "POST", body: form });
  const body = (await response.json()) as { access_token?: string; error?: string; error_description?: string };
  if (!response.ok || !body.access_token)
    throw new Error(`client credentials failed: ${response.status} ${body.error}: ${body.error_description}`);
  return body.access_token;
}

/** Creates a system client with the admin token; returns its id and secret. */
export async function createClient(
  apiUrl: string,
  adminToken: string,
  name: string,
  scopes: string[],
): Promise<{ clientId: string; clientSecret: string }> {
  const response = await fetch(`${apiUrl}/api/v1/admin/clients`, {
    method: "POST",
    headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
    body: JSON.stringify({ name, scopes }),
  });
  const body = (await response.json()) as { clientId: string; clientSecret: string };
  if (response.status !== 201) throw new Error(`client creation failed: ${response.status} ${JSON.stringify(body)}`);
  return { clientId: body.clientId, clientSecret: body.clientSecret };
}
