/**
 * Authentication through HTTP against the real stack: JWKS, the identity-locker sign-in (development provider and a
 * real OAuth 2.0 / OIDC provider played by a local server), client credentials, client administration and the
 * verification of bearer tokens.
 */
import { createHash, createPrivateKey, generateKeyPairSync, randomUUID } from "node:crypto";
import { readFile } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { expect } from "chai";
import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify, SignJWT, type JWTPayload } from "jose";
import pg from "pg";
import { signingKeyFile } from "../../api/src/auth/keys.ts";
import {
  applicantCode,
  applicantToken,
  authorizeParams,
  clientToken,
  createClient,
  exchangeFields,
  rememberVerifier,
  TEST_CLIENT_ID,
  TEST_REDIRECT_URI,
} from "./support/authClient.ts";
import { explicitSecrets } from "./support/productionEnv.ts";
import { startApiProcess, type ExtraApi } from "./support/extraApi.ts";
import { current } from "./support/stackFixture.ts";

const api = () => current().api.url;
const url = (p: string) => `${api()}${p}`;
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

async function tokenRequest(fields: Record<string, string>, headers: Record<string, string> = {}) {
  const response = await fetch(url("/api/v1/auth/token"), {
    method: "POST",
    body: new URLSearchParams(fields),
    headers,
  });
  return {
    status: response.status,
    body: (await response.json()) as Record<string, unknown>,
    headers: response.headers,
  };
}

async function exchange(body: unknown, base = api()) {
  const response = await fetch(`${base}/api/v1/auth/identitylocker/token`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function adminToken(): Promise<string> {
  return clientToken(api(), current().admin.clientId, current().admin.clientSecret);
}

/** GET /admin/clients with the given Authorization header value. */
async function callAdmin(authorization?: string) {
  const response = await fetch(url("/api/v1/admin/clients"), { headers: authorization ? { authorization } : {} });
  return {
    status: response.status,
    body: (await response.json()) as Record<string, unknown>,
    headers: response.headers,
  };
}

/** Signs a token with the service's own on-disk development key (claims overridable). */
async function signWithServiceKey(claims: JWTPayload, header: Record<string, unknown> = {}): Promise<string> {
  const pem = await readFile(signingKeyFile(current().config.dataDir), "utf8");
  const { keys } = (await (await fetch(url("/.well-known/jwks.json"))).json()) as { keys: { kid: string }[] };
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({
    iss: current().config.jwtIssuer,
    aud: current().config.jwtAudience,
    sub: current().admin.clientId,
    iat: now,
    exp: now + 600,
    jti: randomUUID(),
    kind: "client",
    scope: "admin",
    ...claims,
  })
    .setProtectedHeader({ alg: "ES256", typ: "at+jwt", kid: keys[0].kid, ...header })
    .sign(createPrivateKey(pem));
}

describe("Authentication", function () {
  describe("service tokens and their keys", function () {
    it("publishes the ES256 public key with its kid at /.well-known/jwks.json", async function () {
      const response = await fetch(url("/.well-known/jwks.json"));
      expect(response.status).to.equal(200);
      const { keys } = (await response.json()) as { keys: Record<string, string>[] };
      expect(keys).to.have.length(1);
      expect(keys[0]).to.include({ kty: "EC", crv: "P-256", alg: "ES256", use: "sig" });
      expect(keys[0].kid).to.be.a("string").and.not.empty;
      expect(keys[0]).to.not.have.property("d");
    });

    it("keeps the development key under DATA_DIR/secrets with mode 0600", async function () {
      const { stat } = await import("node:fs/promises");
      const info = await stat(signingKeyFile(current().config.dataDir));
      expect(info.mode & 0o777).to.equal(0o600);
      expect(path.basename(path.dirname(signingKeyFile(current().config.dataDir)))).to.equal("secrets");
    });
  });

  describe("identity locker, development provider", function () {
    it("signs in end to end: authorize → 302 with code and state → token that verifies against the JWKS", async function () {
      const state = `s-${randomUUID()}`;
      const redirectUri = "http://localhost:5173/callback?from=app";
      const { query, verifier } = authorizeParams({
        redirect_uri: redirectUri,
        state,
        login_hint: "IL-1001",
        name: "Asha Rao",
        email: "asha@example.org",
      });
      const authorize = await fetch(url(`/api/v1/auth/identitylocker/authorize?${query}`), { redirect: "manual" });
      expect(authorize.status).to.equal(302);
      const back = new URL(authorize.headers.get("location")!);
      expect(`${back.origin}${back.pathname}`).to.equal("http://localhost:5173/callback");
      expect(back.searchParams.get("from")).to.equal("app");
      expect(back.searchParams.get("state")).to.equal(state);
      const code = back.searchParams.get("code")!;
      expect(code).to.match(/^[\w-]{43}$/);

      const { status, body } = await exchange({
        code,
        redirect_uri: redirectUri,
        client_id: TEST_CLIENT_ID,
        code_verifier: verifier,
      });
      expect(status).to.equal(200);
      expect(body).to.have.keys("access_token", "token_type", "expires_in");
      expect(body.token_type).to.equal("Bearer");
      expect(body.expires_in).to.equal(3600);

      const jwks = createRemoteJWKSet(new URL(url("/.well-known/jwks.json")));
      const { payload, protectedHeader } = await jwtVerify(body.access_token as string, jwks, {
        issuer: current().config.jwtIssuer,
        audience: current().config.jwtAudience,
        algorithms: ["ES256"],
      });
      expect(protectedHeader).to.include({ alg: "ES256", typ: "at+jwt" });
      expect(protectedHeader.kid).to.be.a("string");
      expect(payload).to.include({
        sub: "IL-1001",
        kind: "applicant",
        name: "Asha Rao",
        email: "asha@example.org",
        idp: "development",
      });
      expect(payload.jti).to.match(/^[0-9a-f-]{36}$/);
      expect(payload.exp! - payload.iat!).to.equal(3600);
      expect(payload).to.not.have.property("scope");
    });

    it("accepts the applicant token as a caller (authenticated, but not an administrator: 403)", async function () {
      const token = await applicantToken(api(), { id: "IL-1002" });
      const { status, body } = await callAdmin(`Bearer ${token}`);
      expect(status).to.equal(403);
      expect(body.code).to.equal("FORBIDDEN");
    });

    it("codes are single use", async function () {
      const code = await applicantCode(api(), { id: "IL-1003" });
      expect((await exchange(exchangeFields(code))).status).to.equal(200);
      const again = await exchange(exchangeFields(code));
      expect(again).to.deep.equal({
        status: 400,
        body: { error: "invalid_grant", error_description: "The code is invalid or has already been used" },
      });
    });

    it("refuses a redirect_uri other than the one used at authorize (and burns the code)", async function () {
      const code = await applicantCode(api(), { id: "IL-1004" });
      const mismatch = await exchange({ ...exchangeFields(code), redirect_uri: "http://127.0.0.1:9/other" });
      expect(mismatch.status).to.equal(400);
      expect(mismatch.body.error).to.equal("invalid_grant");
      expect(mismatch.body.error_description).to.match(/redirect_uri/);
      expect((await exchange(exchangeFields(code))).body.error).to.equal("invalid_grant");
    });

    it("refuses to redirect to a redirect_uri outside the allowlist (403, no Location)", async function () {
      for (const redirectUri of [
        "https://evil.example/callback",
        "http://127.0.0.1.evil.example/cb",
        "http://127.0.0.1:9/cb#frag",
        "javascript:alert(1)",
        "/relative",
      ]) {
        const { query } = authorizeParams({ redirect_uri: redirectUri, state: "x", login_hint: "IL-1005" });
        const response = await fetch(url(`/api/v1/auth/identitylocker/authorize?${query}`), { redirect: "manual" });
        expect(response.status, redirectUri).to.equal(403);
        expect(response.headers.get("location")).to.equal(null);
        const body = (await response.json()) as { code: string; message: string };
        expect(body.code).to.equal("FORBIDDEN");
        expect(body.message).to.match(/^redirect_uri is not allowed/);
      }
    });

    it("sends the applicant back with error=login_required when login_hint is missing", async function () {
      const { query } = authorizeParams({ redirect_uri: TEST_REDIRECT_URI, state: "st-1" });
      const response = await fetch(url(`/api/v1/auth/identitylocker/authorize?${query}`), { redirect: "manual" });
      expect(response.status).to.equal(302);
      const back = new URL(response.headers.get("location")!);
      expect(back.searchParams.get("error")).to.equal("login_required");
      expect(back.searchParams.get("state")).to.equal("st-1");
      expect(back.searchParams.get("code")).to.equal(null);
    });

    it("answers expired_token for an expired code", async function () {
      const code = await applicantCode(api(), { id: "IL-1006" });
      const db = new pg.Client({ connectionString: current().databaseUrl });
      await db.connect();
      try {
        const hash = createHash("sha256").update(code).digest("hex");
        const { rowCount } = await db.query(
          `UPDATE ${current().config.apiSchema}.identity_codes SET expires_at = now() - interval '1 second' WHERE code_hash = $1`,
          [hash],
        );
        expect(rowCount).to.equal(1);
      } finally {
        await db.end();
      }
      const { status, body } = await exchange(exchangeFields(code));
      expect({ status, error: body.error }).to.deep.equal({ status: 400, error: "expired_token" });
    });

    it("answers the code exchange's other errors in the RFC 6749 shape", async function () {
      expect(await exchange({ redirect_uri: TEST_REDIRECT_URI })).to.deep.equal({
        status: 400,
        body: { error: "invalid_request", error_description: "code is required" },
      });
      expect(
        (await exchange({ code: "x", redirect_uri: TEST_REDIRECT_URI, grant_type: "password" })).body.error,
      ).to.equal("unsupported_grant_type");
      expect((await exchange(exchangeFields("never-issued"))).body.error).to.equal("invalid_grant");
      expect((await exchange({ code: ["a", "b"], redirect_uri: TEST_REDIRECT_URI })).body).to.deep.equal({
        error: "invalid_request",
        error_description: "code is repeated",
      });
      const text = await fetch(url("/api/v1/auth/identitylocker/token"), {
        method: "POST",
        headers: { "content-type": "text/plain" },
        body: "code=x",
      });
      expect(text.status).to.equal(400);
      expect(((await text.json()) as { error: string }).error).to.equal("invalid_request");
    });

    it("has no provider callback without IDENTITY_PROVIDER_* (404)", async function () {
      const response = await fetch(url("/api/v1/auth/identitylocker/callback?state=x&code=y"), { redirect: "manual" });
      expect(response.status).to.equal(404);
    });
  });

  describe("identity locker, OAuth 2.0 / OIDC provider (a local server plays it; extra API process with 2-second tokens)", function () {
    const IDP_CLIENT_ID = "licence-service";
    const IDP_CLIENT_SECRET = "idp-secret-for-tests";
    let idp: http.Server;
    let idpUrl: string;
    let extra: ExtraApi | undefined;
    let extraUrl: string;
    const seen: { authorize?: URLSearchParams; token?: URLSearchParams; userinfoAuth?: string } = {};
    const challenges = new Map<string, string>(); // provider code → code_challenge

    before(async function () {
      idp = http.createServer((req, res) => {
        const requestUrl = new URL(req.url!, idpUrl);
        const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
          res.writeHead(status, { "content-type": "application/json", ...headers });
          res.end(body === undefined ? undefined : JSON.stringify(body));
        };
        if (req.method === "GET" && requestUrl.pathname === "/authorize") {
          const q = requestUrl.searchParams;
          seen.authorize = q;
          const back = new URL(q.get("redirect_uri")!);
          if (q.get("login_hint") === "refuse") {
            back.searchParams.set("error", "access_denied");
          } else {
            const code = `idp-code-${randomUUID()}`;
            challenges.set(code, q.get("code_challenge")!);
            back.searchParams.set("code", code);
          }
          back.searchParams.set("state", q.get("state")!);
          res.writeHead(302, { location: back.href });
          return res.end();
        }
        if (req.method === "POST" && requestUrl.pathname === "/token") {
          let raw = "";
          req.on("data", (chunk) => (raw += chunk));
          req.on("end", () => {
            const form = new URLSearchParams(raw);
            seen.token = form;
            const challenge = challenges.get(form.get("code") ?? "");
            challenges.delete(form.get("code") ?? "");
            const verifierOk =
              challenge &&
              createHash("sha256")
                .update(form.get("code_verifier") ?? "")
                .digest("base64url") === challenge;
            if (form.get("client_id") !== IDP_CLIENT_ID || form.get("client_secret") !== IDP_CLIENT_SECRET)
              return send(401, { error: "invalid_client" });
            if (!verifierOk || form.get("grant_type") !== "authorization_code")
              return send(400, { error: "invalid_grant" });
            send(200, { access_token: "idp-access-token", token_type: "Bearer", expires_in: 300 });
          });
          return;
        }
        if (req.method === "GET" && requestUrl.pathname === "/userinfo") {
          seen.userinfoAuth = req.headers.authorization;
          if (req.headers.authorization !== "Bearer idp-access-token") return send(401, { error: "invalid_token" });
          return send(200, { sub: "IL-OIDC-42", name: "Meera Iyer", email: "meera@example.org" });
        }
        send(404, { error: "not_found" });
      });
      await new Promise<void>((resolve) => idp.listen(0, "127.0.0.1", resolve));
      idpUrl = `http://127.0.0.1:${(idp.address() as AddressInfo).port}`;

      // A real provider: no development conveniences, so every secret is given, and the test client is registered.
      extra = await startApiProcess("api-auth-oidc", {
        DEV_CONVENIENCES: "false",
        ...((await explicitSecrets(current())) as Record<string, string>),
        REDIRECT_URI_ALLOWLIST: `${TEST_CLIENT_ID}=${TEST_REDIRECT_URI}`,
        ACCESS_TOKEN_TTL_SECONDS: "2",
        IDENTITY_PROVIDER_AUTHORIZE_URL: `${idpUrl}/authorize`,
        IDENTITY_PROVIDER_TOKEN_URL: `${idpUrl}/token`,
        IDENTITY_PROVIDER_USERINFO_URL: `${idpUrl}/userinfo`,
        IDENTITY_PROVIDER_CLIENT_ID: IDP_CLIENT_ID,
        IDENTITY_PROVIDER_CLIENT_SECRET: IDP_CLIENT_SECRET,
      });
      extraUrl = extra.url;
    });

    after(async function () {
      await extra?.stop();
      await new Promise((resolve) => idp?.close(resolve));
    });

    /** Follows the browser's path: our authorize → provider → our callback → applicant's redirect_uri. */
    async function signIn(loginHint: string, state: string): Promise<URL> {
      const { query, verifier } = authorizeParams({ redirect_uri: TEST_REDIRECT_URI, state, login_hint: loginHint });
      const toProvider = await fetch(`${extraUrl}/api/v1/auth/identitylocker/authorize?${query}`, {
        redirect: "manual",
      });
      expect(toProvider.status).to.equal(302);
      const providerUrl = new URL(toProvider.headers.get("location")!);
      expect(providerUrl.origin + providerUrl.pathname).to.equal(`${idpUrl}/authorize`);
      const toCallback = await fetch(providerUrl, { redirect: "manual" });
      expect(toCallback.status).to.equal(302);
      const callbackUrl = new URL(toCallback.headers.get("location")!);
      expect(callbackUrl.origin + callbackUrl.pathname).to.equal(`${extraUrl}/api/v1/auth/identitylocker/callback`);
      const toApplicant = await fetch(callbackUrl, { redirect: "manual" });
      expect(toApplicant.status).to.equal(302);
      const back = new URL(toApplicant.headers.get("location")!);
      if (back.searchParams.get("code")) rememberVerifier(back.searchParams.get("code")!, verifier);
      return back;
    }

    it("signs in through the provider: code + PKCE + client secret exchanged, userinfo read, our code issued", async function () {
      const back = await signIn("IL-OIDC-42", "client-state-1");
      expect(back.origin + back.pathname).to.equal(
        new URL(TEST_REDIRECT_URI).origin + new URL(TEST_REDIRECT_URI).pathname,
      );
      expect(back.searchParams.get("state")).to.equal("client-state-1");
      const code = back.searchParams.get("code")!;
      expect(code).to.be.a("string");

      expect(seen.authorize!.get("response_type")).to.equal("code");
      expect(seen.authorize!.get("client_id")).to.equal(IDP_CLIENT_ID);
      expect(seen.authorize!.get("scope")).to.equal("openid profile email");
      expect(seen.authorize!.get("code_challenge_method")).to.equal("S256");
      expect(seen.authorize!.get("login_hint")).to.equal("IL-OIDC-42");
      expect(seen.authorize!.get("state")).to.not.equal("client-state-1"); // our own state towards the provider
      expect(seen.token!.get("redirect_uri")).to.equal(`${extraUrl}/api/v1/auth/identitylocker/callback`);
      expect(seen.userinfoAuth).to.equal("Bearer idp-access-token");

      const { status, body } = await exchange(exchangeFields(code), extraUrl);
      expect(status).to.equal(200);
      expect(body.expires_in).to.equal(2);
      const jwks = createRemoteJWKSet(new URL(url("/.well-known/jwks.json")));
      const { payload } = await jwtVerify(body.access_token as string, jwks, {
        issuer: current().config.jwtIssuer,
        audience: current().config.jwtAudience,
      });
      expect(payload).to.include({
        sub: "IL-OIDC-42",
        kind: "applicant",
        name: "Meera Iyer",
        email: "meera@example.org",
        idp: "identity-locker",
      });
      expect(payload.exp! - payload.iat!).to.equal(2);
    });

    it("sends the applicant back with error=access_denied and the original state when the provider refuses", async function () {
      const back = await signIn("refuse", "client-state-2");
      expect(back.searchParams.get("error")).to.equal("access_denied");
      expect(back.searchParams.get("state")).to.equal("client-state-2");
      expect(back.searchParams.get("code")).to.equal(null);
    });

    it("refuses a callback with an unknown or replayed state (401)", async function () {
      const unknown = await fetch(`${extraUrl}/api/v1/auth/identitylocker/callback?state=forged&code=x`, {
        redirect: "manual",
      });
      expect(unknown.status).to.equal(401);
      expect(((await unknown.json()) as { code: string }).code).to.equal("UNAUTHORIZED");

      const { query } = authorizeParams({ redirect_uri: TEST_REDIRECT_URI, state: "s3", login_hint: "IL-OIDC-42" });
      const toProvider = await fetch(`${extraUrl}/api/v1/auth/identitylocker/authorize?${query}`, {
        redirect: "manual",
      });
      const toCallback = await fetch(toProvider.headers.get("location")!, { redirect: "manual" });
      const callback = toCallback.headers.get("location")!;
      expect((await fetch(callback, { redirect: "manual" })).status).to.equal(302);
      expect((await fetch(callback, { redirect: "manual" })).status).to.equal(401);
    });

    it("honours ACCESS_TOKEN_TTL_SECONDS: a 2-second token is refused once expired (401 UNAUTHORIZED)", async function () {
      const form = new URLSearchParams({
        grant_type: "client_credentials",
        client_id: current().admin.clientId,
        client_secret: current().admin.clientSecret,
      });
      const response = await fetch(`${extraUrl}/api/v1/auth/token`, { method: "POST", body: form });
      const body = (await response.json()) as { access_token: string; expires_in: number };
      expect(body.expires_in).to.equal(2);
      expect((await fetch(`${extraUrl}/api/v1/admin/clients`, { headers: bearer(body.access_token) })).status).to.equal(
        200,
      );
      await new Promise((resolve) => setTimeout(resolve, 3_100));
      for (const base of [extraUrl, api()]) {
        const expired = await fetch(`${base}/api/v1/admin/clients`, { headers: bearer(body.access_token) });
        expect(expired.status).to.equal(401);
        expect(await expired.json()).to.deep.equal({ code: "UNAUTHORIZED", message: "The access token has expired" });
        expect(expired.headers.get("www-authenticate")).to.match(/^Bearer error="invalid_token"/);
      }
    });
  });

  describe("OAuth 2.0 client credentials and client administration", function () {
    let admin: string;
    let reader: { clientId: string; clientSecret: string };
    before(async function () {
      admin = await adminToken();
      reader = await createClient(api(), admin, "Reader", ["applications:read", "documents:read", "verification:read"]);
    });

    it("issues the bootstrap admin a token with scope admin", async function () {
      const { status, body, headers } = await tokenRequest({
        grant_type: "client_credentials",
        client_id: current().admin.clientId,
        client_secret: current().admin.clientSecret,
      });
      expect(status).to.equal(200);
      expect(body).to.include({ token_type: "Bearer", expires_in: 3600, scope: "admin" });
      expect(headers.get("cache-control")).to.equal("no-store");
      const claims = decodeJwt(body.access_token as string);
      expect(claims).to.include({
        sub: current().admin.clientId,
        client_id: current().admin.clientId,
        kind: "client",
        scope: "admin",
      });
      expect(claims.exp! - claims.iat!).to.equal(3600);
      expect(decodeProtectedHeader(body.access_token as string)).to.include({ alg: "ES256", typ: "at+jwt" });
    });

    it("creates a client (secret shown once) and lists clients without secrets", async function () {
      const response = await fetch(url("/api/v1/admin/clients"), {
        method: "POST",
        headers: { ...bearer(admin), "content-type": "application/json" },
        body: JSON.stringify({
          name: "Portal",
          scopes: ["documents:write", "applications:write", "applications:write"],
        }),
      });
      expect(response.status).to.equal(201);
      const created = (await response.json()) as Record<string, unknown>;
      expect(created).to.have.keys("clientId", "clientSecret", "name", "scopes", "createdAt");
      expect(created).to.include({ name: "Portal" });
      expect(created.scopes).to.deep.equal(["applications:write", "documents:write"]);
      expect(created.clientSecret).to.match(/^lcs_[\w-]{43}$/);

      const list = await callAdmin(`Bearer ${admin}`);
      expect(list.status).to.equal(200);
      const clients = list.body.clients as Record<string, unknown>[];
      const listed = clients.find((c) => c.clientId === created.clientId)!;
      expect(listed).to.deep.equal({
        clientId: created.clientId,
        name: "Portal",
        scopes: ["applications:write", "documents:write"],
        bootstrap: false,
        createdAt: created.createdAt,
        revokedAt: null,
      });
      expect(clients.some((c) => c.clientId === current().admin.clientId && c.bootstrap === true)).to.equal(true);
      const text = JSON.stringify(list.body);
      expect(text).to.not.include(created.clientSecret as string);
      expect(text).to.not.match(/secret|hash/i);
    });

    it("validates client creation input (400)", async function () {
      const response = await fetch(url("/api/v1/admin/clients"), {
        method: "POST",
        headers: { ...bearer(admin), "content-type": "application/json" },
        body: JSON.stringify({ name: "", scopes: ["root"] }),
      });
      expect(response.status).to.equal(400);
      expect(((await response.json()) as { code: string }).code).to.equal("VALIDATION_ERROR");
    });

    it("grants the requested subset of the client's scopes, or all of them when none is asked", async function () {
      const subset = await tokenRequest({
        grant_type: "client_credentials",
        client_id: reader.clientId,
        client_secret: reader.clientSecret,
        scope: "documents:read applications:read",
      });
      expect(subset.status).to.equal(200);
      expect(subset.body.scope).to.equal("applications:read documents:read");
      expect(decodeJwt(subset.body.access_token as string).scope).to.equal("applications:read documents:read");
      const all = await tokenRequest({
        grant_type: "client_credentials",
        client_id: reader.clientId,
        client_secret: reader.clientSecret,
      });
      expect(all.body.scope).to.equal("applications:read documents:read verification:read");
      const adminSubset = await tokenRequest({
        grant_type: "client_credentials",
        client_id: current().admin.clientId,
        client_secret: current().admin.clientSecret,
        scope: "applications:read",
      });
      expect(adminSubset.body.scope).to.equal("applications:read");
    });

    it("accepts HTTP Basic client authentication", async function () {
      const basic = Buffer.from(
        `${encodeURIComponent(reader.clientId)}:${encodeURIComponent(reader.clientSecret)}`,
      ).toString("base64");
      const { status, body } = await tokenRequest(
        { grant_type: "client_credentials", scope: "verification:read" },
        { authorization: `Basic ${basic}` },
      );
      expect(status).to.equal(200);
      expect(body.scope).to.equal("verification:read");
    });

    it("answers each error in the RFC 6749 shape with its status", async function () {
      const base = { grant_type: "client_credentials", client_id: reader.clientId, client_secret: reader.clientSecret };
      const cases: [Record<string, string>, number, string][] = [
        [{ ...base, client_id: "cli_unknown" }, 401, "invalid_client"],
        [{ grant_type: "client_credentials", client_id: reader.clientId }, 401, "invalid_client"],
        [{ ...base, client_secret: "lcs_wrong" }, 401, "invalid_client"],
        [{ ...base, scope: "applications:read admin" }, 400, "invalid_scope"],
        [{ ...base, scope: "documents:write" }, 400, "invalid_scope"],
        [{ ...base, scope: "superuser" }, 400, "invalid_scope"],
        [{ ...base, grant_type: "password" }, 400, "unsupported_grant_type"],
        [{ client_id: reader.clientId, client_secret: reader.clientSecret }, 400, "invalid_request"],
      ];
      for (const [fields, status, error] of cases) {
        const response = await tokenRequest(fields);
        expect({ status: response.status, error: response.body.error }, JSON.stringify(fields)).to.deep.equal({
          status,
          error,
        });
        expect(response.body).to.have.keys("error", "error_description");
        expect(response.body.error_description).to.be.a("string").and.not.include(reader.clientSecret);
      }
      const json = await fetch(url("/api/v1/auth/token"), {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(base),
      });
      expect(json.status).to.equal(400);
      expect(((await json.json()) as { error: string }).error).to.equal("invalid_request");
    });

    it("refuses a non-admin client on an admin route (403 FORBIDDEN)", async function () {
      const token = await clientToken(api(), reader.clientId, reader.clientSecret);
      const { status, body } = await callAdmin(`Bearer ${token}`);
      expect(status).to.equal(403);
      expect(body).to.deep.equal({ code: "FORBIDDEN", message: "You are not allowed to do this" });
    });

    it("answers admin routes without credentials with 401 UNAUTHORIZED", async function () {
      const { status, body } = await callAdmin();
      expect(status).to.equal(401);
      expect(body.code).to.equal("UNAUTHORIZED");
    });

    it("revokes a client: its secret stops working and the token it holds is refused", async function () {
      const second = await createClient(api(), admin, "Second admin", ["admin"]);
      const token = await clientToken(api(), second.clientId, second.clientSecret);
      expect((await callAdmin(`Bearer ${token}`)).status).to.equal(200);

      const revoke = await fetch(url(`/api/v1/admin/clients/${second.clientId}`), {
        method: "DELETE",
        headers: bearer(admin),
      });
      expect(revoke.status).to.equal(204);
      const refused = await callAdmin(`Bearer ${token}`);
      expect(refused.status).to.equal(401);
      expect(refused.body).to.deep.equal({
        code: "UNAUTHORIZED",
        message: "The client of this access token has been revoked",
      });
      const again = await tokenRequest({
        grant_type: "client_credentials",
        client_id: second.clientId,
        client_secret: second.clientSecret,
      });
      expect({ status: again.status, error: again.body.error }).to.deep.equal({ status: 401, error: "invalid_client" });

      const listed = (await callAdmin(`Bearer ${admin}`)).body.clients as { clientId: string }[];
      expect(listed.map((c) => c.clientId)).to.not.include(second.clientId);
      const withRevoked = await fetch(url("/api/v1/admin/clients?includeRevoked=true"), { headers: bearer(admin) });
      const revoked = (
        (await withRevoked.json()) as { clients: { clientId: string; revokedAt: string | null }[] }
      ).clients.find((c) => c.clientId === second.clientId);
      expect(revoked?.revokedAt).to.be.a("string");
      expect(
        (await fetch(url(`/api/v1/admin/clients/${second.clientId}`), { method: "DELETE", headers: bearer(admin) }))
          .status,
      ).to.equal(204);
    });

    it("answers 404 for an unknown client and 409 for the bootstrap admin client", async function () {
      const unknown = await fetch(url("/api/v1/admin/clients/cli_nope"), { method: "DELETE", headers: bearer(admin) });
      expect(unknown.status).to.equal(404);
      const bootstrap = await fetch(url(`/api/v1/admin/clients/${current().admin.clientId}`), {
        method: "DELETE",
        headers: bearer(admin),
      });
      expect(bootstrap.status).to.equal(409);
      expect(((await bootstrap.json()) as { code: string }).code).to.equal("BOOTSTRAP_CLIENT");
    });
  });

  describe("bearer token verification", function () {
    async function expect401(authorization: string, message: string | RegExp) {
      const { status, body, headers } = await callAdmin(authorization);
      expect(status, authorization.slice(0, 40)).to.equal(401);
      expect(body.code).to.equal("UNAUTHORIZED");
      if (typeof message === "string") expect(body.message).to.equal(message);
      else expect(body.message).to.match(message);
      expect(headers.get("www-authenticate")).to.match(/^Bearer error="invalid_token"/);
      expect(body.message).to.not.include(authorization.slice(7, 40) || "\u0000");
    }

    it("accepts a token it signed itself (control for the cases below)", async function () {
      expect((await callAdmin(`Bearer ${await signWithServiceKey({})}`)).status).to.equal(200);
    });

    it("refuses an expired token", async function () {
      const now = Math.floor(Date.now() / 1000);
      await expect401(
        `Bearer ${await signWithServiceKey({ iat: now - 120, exp: now - 60 })}`,
        "The access token has expired",
      );
    });

    it("refuses a token signed by another ES256 key (same kid, or another kid)", async function () {
      const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
      const { keys } = (await (await fetch(url("/.well-known/jwks.json"))).json()) as { keys: { kid: string }[] };
      const now = Math.floor(Date.now() / 1000);
      const claims = {
        iss: current().config.jwtIssuer,
        aud: current().config.jwtAudience,
        sub: current().admin.clientId,
        iat: now,
        exp: now + 600,
        jti: randomUUID(),
        kind: "client",
        scope: "admin",
      };
      const sameKid = await new SignJWT(claims)
        .setProtectedHeader({ alg: "ES256", typ: "at+jwt", kid: keys[0].kid })
        .sign(privateKey);
      await expect401(`Bearer ${sameKid}`, "The access token's signature is invalid");
      const otherKid = await new SignJWT(claims)
        .setProtectedHeader({ alg: "ES256", typ: "at+jwt", kid: "attacker" })
        .sign(privateKey);
      await expect401(`Bearer ${otherKid}`, "The access token was not signed with this service's key");
    });

    it("refuses a tampered token (payload changed, signature kept)", async function () {
      const applicant = await applicantToken(api(), { id: "IL-2001" });
      const [header, payload, signature] = applicant.split(".");
      const claims = JSON.parse(Buffer.from(payload, "base64url").toString());
      const forged = Buffer.from(JSON.stringify({ ...claims, kind: "client", scope: "admin" })).toString("base64url");
      await expect401(`Bearer ${header}.${forged}.${signature}`, "The access token's signature is invalid");
    });

    it("refuses a token for another audience or from another issuer", async function () {
      await expect401(
        `Bearer ${await signWithServiceKey({ aud: "another-api" })}`,
        "The access token is meant for another audience",
      );
      await expect401(
        `Bearer ${await signWithServiceKey({ iss: "https://elsewhere.example" })}`,
        "The access token was issued by another issuer",
      );
    });

    it("refuses unsigned and HMAC tokens, wrong token types and malformed headers", async function () {
      const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
      const now = Math.floor(Date.now() / 1000);
      const claims = {
        iss: current().config.jwtIssuer,
        aud: current().config.jwtAudience,
        sub: "x",
        iat: now,
        exp: now + 600,
        jti: "j",
        kind: "client",
        scope: "admin",
      };
      await expect401(`Bearer ${b64({ alg: "none", typ: "at+jwt" })}.${b64(claims)}.`, "The access token is malformed");
      const hmac = await new SignJWT(claims)
        .setProtectedHeader({ alg: "HS256", typ: "at+jwt" })
        .sign(new TextEncoder().encode("k".repeat(32)));
      await expect401(`Bearer ${hmac}`, /algorithm/);
      await expect401(
        `Bearer ${await signWithServiceKey({}, { typ: "JWT" })}`,
        "The token is not an access token of this service",
      );
      await expect401(
        `Bearer ${await signWithServiceKey({ kind: "root" })}`,
        'The access token\'s "kind" claim is invalid',
      );
      await expect401("Bearer not-a-jwt", "The access token is malformed");
      await expect401("Bearer", 'The Authorization header must be "Bearer <access token>"');
    });

    it("answers X-API-Key with 401 while department keys are not wired in (and refuses mixing it with a bearer token)", async function () {
      const keyOnly = await fetch(url("/api/v1/admin/clients"), {
        headers: { "x-api-key": "k", "x-department-code": "FIRE" },
      });
      expect(keyOnly.status).to.equal(401);
      expect(((await keyOnly.json()) as { code: string }).code).to.equal("UNAUTHORIZED");
      const both = await fetch(url("/api/v1/admin/clients"), {
        headers: { ...bearer(await adminToken()), "x-api-key": "k" },
      });
      expect(both.status).to.equal(401);
    });
  });

  describe("bootstrap admin client", function () {
    it("updates the stored hash when ADMIN_CLIENT_SECRET changes: the old secret and its tokens stop working", async function () {
      const { clientId, clientSecret } = current().admin;
      const oldToken = await adminToken();
      const rotated = await startApiProcess("api-auth-rotated", { ADMIN_CLIENT_SECRET: `${clientSecret}-rotated` });
      try {
        const post = (secret: string) =>
          fetch(`${rotated.url}/api/v1/auth/token`, {
            method: "POST",
            body: new URLSearchParams({ grant_type: "client_credentials", client_id: clientId, client_secret: secret }),
          });
        const old = await post(clientSecret);
        expect(old.status).to.equal(401);
        expect(((await old.json()) as { error: string }).error).to.equal("invalid_client");
        expect((await post(`${clientSecret}-rotated`)).status).to.equal(200);
        const refused = await fetch(`${rotated.url}/api/v1/admin/clients`, { headers: bearer(oldToken) });
        expect(refused.status).to.equal(401);
        expect(((await refused.json()) as { message: string }).message).to.equal(
          "The client's secret was changed after this access token was issued",
        );
      } finally {
        await rotated.stop();
        // Put the stack's secret back for the other suites (a process started with it re-hashes it).
        const restored = await startApiProcess("api-auth-restored", {});
        await restored.stop();
      }
      expect(
        (await tokenRequest({ grant_type: "client_credentials", client_id: clientId, client_secret: clientSecret }))
          .status,
      ).to.equal(200);
    });
  });

  describe("OpenAPI", function () {
    it("documents the auth routes, their access and their scopes", async function () {
      const doc = (await (await fetch(url("/api/v1/openapi.json"))).json()) as {
        paths: Record<string, Record<string, { description: string; security: unknown[] }>>;
      };
      for (const p of [
        "/api/v1/auth/token",
        "/api/v1/auth/identitylocker/authorize",
        "/api/v1/auth/identitylocker/token",
        "/api/v1/admin/clients",
        "/api/v1/admin/clients/{clientId}",
        "/.well-known/jwks.json",
      ]) {
        expect(doc.paths, p).to.have.property(p);
      }
      expect(doc.paths["/api/v1/admin/clients"].get.security).to.deep.equal([{ AdminAuth: ["admin"] }]);
      expect(doc.paths["/api/v1/admin/clients"].post.description).to.include("Requires scope `admin`");
      expect(doc.paths["/api/v1/auth/token"].post.description).to.include("`applications:read`");
      expect(doc.paths["/api/v1/auth/token"].post.security).to.deep.equal([]);
    });
  });
});
