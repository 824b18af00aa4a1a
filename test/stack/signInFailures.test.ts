/**
 * Failed sign-ins: the token endpoint gives one answer whether the client id exists or not (status, body, time),
 * and every failed sign-in (client secret, department API key, identity-locker authorize and code exchange) is an
 * audit row without the secret tried, written only while the per-credential and per-address allowances last.
 */
import { expect } from "chai";
import pg from "pg";
import { authorizeParams, clientToken, createClient, exchangeFields, TEST_REDIRECT_URI } from "./support/authClient.ts";
import { productionEnv } from "./support/productionEnv.ts";
import { current } from "./support/stackFixture.ts";
import { letters } from "./support/sessions.ts";

const tag = letters(String(Date.now() % 1e8));

const tokenRequest = async (api: string, clientId: string, clientSecret: string, from?: string) => {
  const started = performance.now();
  const response = await fetch(`${api}/api/v1/auth/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", ...(from ? { "x-forwarded-for": from } : {}) },
    body: new URLSearchParams({ grant_type: "client_credentials", client_id: clientId, client_secret: clientSecret }),
  });
  const ms = performance.now() - started;
  return { status: response.status, headers: response.headers, text: await response.text(), ms };
};

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

describe("failed sign-ins: one answer for unknown and wrong credentials, and an audit row each", function () {
  let pool: pg.Pool;
  let admin: string;

  before(async function () {
    const stack = current();
    pool = new pg.Pool({ connectionString: stack.databaseUrl, options: `-c search_path=${stack.config.apiSchema}` });
    admin = await clientToken(stack.api.url, stack.admin.clientId, stack.admin.clientSecret, "admin");
  });
  after(async () => pool?.end());

  const failures = async (entityType: string, entityId: string) =>
    (
      await pool.query(
        `SELECT action, actor_type, actor_id, new_value, ip_address FROM audit_logs
          WHERE entity_type = $1 AND entity_id = $2 AND action = 'SIGN_IN_FAILED' ORDER BY created_at`,
        [entityType, entityId],
      )
    ).rows;

  describe("POST /auth/token", function () {
    it("answers an unknown client id, a wrong secret and a revoked client alike: 401 invalid_client, the same body", async function () {
      const api = current().api.url;
      const client = await createClient(api, admin, `revoked-${tag}`, ["applications:read"]);
      await fetch(`${api}/api/v1/admin/clients/${client.clientId}`, {
        method: "DELETE",
        headers: { authorization: `Bearer ${admin}` },
      });
      const answers = [
        await tokenRequest(api, `nobody-${tag}`, "some-secret"),
        await tokenRequest(api, "cli_0123456789abcdef0123", "lcs_some-secret"),
        await tokenRequest(api, current().admin.clientId, "a-wrong-secret"),
        await tokenRequest(api, client.clientId, client.clientSecret),
      ];
      for (const answer of answers) {
        expect(answer.status).to.equal(401);
        expect(JSON.parse(answer.text)).to.deep.equal({
          error: "invalid_client",
          error_description: "The client credentials are invalid",
        });
        expect(answer.headers.get("www-authenticate")).to.equal(null);
      }
    });

    it("takes as long for an unknown client id as for the administrator's wrong secret (a dummy hash is compared)", async function () {
      const api = current().api.url;
      const unknown: number[] = [];
      const wrong: number[] = [];
      for (let i = 0; i < 9; i++) {
        unknown.push((await tokenRequest(api, `admin-guess-${tag}-${i}`, "a-wrong-secret")).ms);
        wrong.push((await tokenRequest(api, current().admin.clientId, "a-wrong-secret")).ms);
      }
      // The administrator's secret is checked with scrypt (tens of ms): an unknown id answered at once stood out.
      expect(median(unknown) / median(wrong)).to.be.above(0.5);
    });

    it("records a failed client sign-in as an ANONYMOUS audit row, without the secret tried", async function () {
      const api = current().api.url;
      const claimed = `ghost-${tag}`;
      await tokenRequest(api, claimed, `the-tried-secret-${tag}`);
      await tokenRequest(api, current().admin.clientId, `the-tried-secret-${tag}`);
      const rows = await failures("CLIENT", claimed);
      expect(rows).to.have.length(1);
      expect(rows[0]).to.deep.include({
        action: "SIGN_IN_FAILED",
        actor_type: "ANONYMOUS",
        actor_id: "unauthenticated",
        new_value: { method: "client_credentials", reason: "unknown_client" },
      });
      const admins = await failures("CLIENT", current().admin.clientId);
      expect(admins.at(-1)!.new_value).to.deep.equal({ method: "client_credentials", reason: "wrong_secret" });
      const { rows: leaked } = await pool.query(`SELECT 1 FROM audit_logs WHERE audit_logs::text LIKE $1`, [
        `%the-tried-secret-${tag}%`,
      ]);
      expect(leaked).to.have.length(0);
    });
  });

  it("records a wrong department API key (the claimed department code, not the key)", async function () {
    const code = `NOPE_${tag}`;
    const response = await fetch(`${current().api.url}/api/v1/requests/pending`, {
      headers: { "x-api-key": `guessed-key-${tag}`, "x-department-code": code },
    });
    expect(response.status).to.equal(401);
    const rows = await failures("DEPARTMENT", code);
    expect(rows).to.have.length(1);
    expect(rows[0]).to.deep.include({
      actor_type: "ANONYMOUS",
      new_value: { method: "api_key", reason: "The API key is not valid for this department" },
    });
    expect(JSON.stringify(rows)).to.not.include(`guessed-key-${tag}`);
  });

  it("records refused identity-locker sign-ins: at authorize (development provider) and at the code exchange", async function () {
    const api = current().api.url;
    const who = `refused-${tag}`;
    // A redirect_uri that is not allowed.
    const { query } = authorizeParams({ redirect_uri: "https://evil.example/cb", state: "s", login_hint: who });
    expect(
      (await fetch(`${api}/api/v1/auth/identitylocker/authorize?${query}`, { redirect: "manual" })).status,
    ).to.equal(403);
    // A code presented with the wrong redirect_uri (the code is burnt, the applicant named).
    const { query: good, verifier } = authorizeParams({ redirect_uri: TEST_REDIRECT_URI, state: "s", login_hint: who });
    const back = await fetch(`${api}/api/v1/auth/identitylocker/authorize?${good}`, { redirect: "manual" });
    const code = new URL(back.headers.get("location")!).searchParams.get("code")!;
    const exchanged = await fetch(`${api}/api/v1/auth/identitylocker/token`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ ...exchangeFields(code, "http://127.0.0.1:9/other"), code_verifier: verifier }),
    });
    expect(exchanged.status).to.equal(400);
    const rows = await failures("APPLICANT", who);
    expect(rows.map((row) => row.new_value)).to.deep.equal([
      {
        method: "development",
        reason:
          "redirect_uri is not allowed: it is not a registered redirect_uri (REDIRECT_URI_ALLOWLIST, exact match)",
      },
      { method: "authorization_code", reason: "redirect_uri does not match the one used at authorize" },
    ]);
    expect(JSON.stringify(rows)).to.not.include(code);
  });

  it("writes failures only while the allowances last: past them, 429 and no row (the audit table cannot be flooded)", async function () {
    const stack = current();
    const limited = await stack.startExtraApi(
      undefined,
      await productionEnv(stack, { TRUST_PROXY_HOPS: "1", RATE_LIMIT_AUTH_PER_MINUTE: "3" }),
    );
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++)
        statuses.push((await tokenRequest(limited.url, `flood-${tag}-${i}`, "x", "192.0.2.77")).status);
      expect(statuses).to.deep.equal([401, 401, 401, 429, 429, 429]);
      const { rows } = await pool.query(
        `SELECT entity_id FROM audit_logs WHERE action = 'SIGN_IN_FAILED' AND entity_id LIKE $1 ORDER BY entity_id`,
        [`flood-${tag}-%`],
      );
      expect(rows.map((row) => row.entity_id)).to.deep.equal([0, 1, 2].map((i) => `flood-${tag}-${i}`));
      expect(
        (await pool.query(`SELECT ip_address FROM audit_logs WHERE entity_id = $1`, [`flood-${tag}-0`])).rows[0],
      ).to.deep.equal({ ip_address: "192.0.2.77" });
    } finally {
      await limited.stop();
    }
  });
});
