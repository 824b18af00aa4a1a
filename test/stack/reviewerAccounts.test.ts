/**
 * Reviewer accounts over HTTP with a software passkey: invitations, passkey registration, sign-in, console sessions
 * (cookie, expiry, removal, what a session may reach, CSRF), every change audited.
 */
import { expect } from "chai";
import { clientToken } from "./support/authClient.ts";
import { createDepartment, departmentClient, type CreatedTestDepartment } from "./support/departmentClient.ts";
import { apiClient, type Json, expectError } from "./support/httpClient.ts";
import { createDriver, type Driver } from "./support/platformDriver.ts";
import {
  authenticationResponse,
  createSoftwarePasskey,
  FLAG_AT,
  FLAG_UP,
  registrationResponse,
  type SoftwarePasskey,
} from "./support/softwarePasskey.ts";
import { current } from "./support/stackFixture.ts";
import { letters } from "./support/sessions.ts";

interface Result {
  status: number;
  headers: Headers;
  body: Json;
}

/** A browser tab on the console: keeps the session cookie, sends the console's Origin unless told otherwise. */
function consoleBrowser(api: string, origin: string) {
  let cookie: string | undefined;
  const call = async (method: string, route: string, body?: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(`${api}/api/v1${route}`, {
      method,
      headers: {
        ...(method === "GET" ? {} : { origin }),
        ...(cookie ? { cookie } : {}),
        ...(body === undefined ? {} : { "content-type": "application/json" }),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const setCookie = response.headers.getSetCookie().find((c) => c.startsWith("console_session="));
    if (setCookie) {
      const value = setCookie.split(";")[0]!;
      cookie = value === "console_session=" ? undefined : value;
    }
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: (text ? JSON.parse(text) : undefined) as Json };
  };
  return {
    get: (route: string, headers?: Record<string, string>) => call("GET", route, undefined, headers),
    post: (route: string, body: unknown = {}, headers?: Record<string, string>) => call("POST", route, body, headers),
    delete: (route: string, headers?: Record<string, string>) => call("DELETE", route, undefined, headers),
    cookie: () => cookie,
    setCookie: (value: string | undefined) => (cookie = value),
  };
}
type Browser = ReturnType<typeof consoleBrowser>;

describe("reviewer accounts and console sessions (passkeys)", function () {
  // Department codes are A-Z and _ only.
  const run = letters(`${Date.now() % 1e7}`);
  let api: string;
  let driver: Driver;
  let adminToken: string;
  let admin: ReturnType<typeof apiClient>;
  let water: CreatedTestDepartment;
  let fire: CreatedTestDepartment;
  let asWater: ReturnType<typeof departmentClient>;
  let asFire: ReturnType<typeof departmentClient>;
  let origin: string;
  let rpId: string;

  const tokenOf = (invitationUrl: string) => invitationUrl.split("#/invite/")[1]!;
  const ceremony = () => ({ origin, rpId });
  const reviewerAudit = async (reviewerId: string) =>
    (
      await driver.core.pool.query(
        `SELECT action, actor_type, actor_id, new_value, old_value FROM audit_logs
         WHERE entity_type = 'REVIEWER' AND entity_id = $1 ORDER BY created_at`,
        [reviewerId],
      )
    ).rows;
  const invitationRow = async (reviewerId: string) =>
    (await driver.core.pool.query(`SELECT * FROM reviewer_invitations WHERE reviewer_id = $1`, [reviewerId])).rows[0];

  async function invite(name: string): Promise<{ reviewerId: string; token: string; body: Json }> {
    const invited = await asWater.post(`/departments/${water.code}/reviewer-invitations`, { name });
    expect(invited.status, JSON.stringify(invited.body)).to.equal(201);
    return { reviewerId: invited.body.reviewerId, token: tokenOf(invited.body.invitationUrl), body: invited.body };
  }

  /** Invites a reviewer and registers `passkey` through the invitation in a new browser (signed in). */
  async function registered(name: string, passkey = createSoftwarePasskey()) {
    const { reviewerId, token } = await invite(name);
    const browser = consoleBrowser(api, origin);
    const options = await browser.post("/console/invitations/registration-options", { token, deviceName: "Laptop" });
    expect(options.status, JSON.stringify(options.body)).to.equal(200);
    const done = await browser.post("/console/invitations/register", {
      token,
      response: registrationResponse(passkey, options.body.options, ceremony()),
    });
    expect(done.status, JSON.stringify(done.body)).to.equal(201);
    return { reviewerId, passkey, browser, token };
  }

  async function signIn(
    browser: Browser,
    passkey: SoftwarePasskey,
    overrides: Partial<{ origin: string; rpId: string; signCount: number }> = {},
  ) {
    const options = await browser.post("/console/sign-in/options", {});
    expect(options.status).to.equal(200);
    const response = authenticationResponse(passkey, options.body.options, { ...ceremony(), ...overrides });
    return { answer: await browser.post("/console/sign-in", { response }), response };
  }

  before(async function () {
    const stack = current();
    api = stack.api.url;
    driver = await createDriver(stack);
    adminToken = await clientToken(api, stack.admin.clientId, stack.admin.clientSecret, "admin");
    admin = apiClient(api, adminToken);
    [water, fire] = await Promise.all([
      createDepartment(api, adminToken, { code: `WATER_${run}`, name: "Water Board" }),
      createDepartment(api, adminToken, { code: `FIRE_${run}`, name: "Fire Service" }),
    ]);
    asWater = departmentClient(api, water);
    asFire = departmentClient(api, fire);
    const probe = await invite("Probe");
    const url = new URL(probe.body.invitationUrl);
    origin = url.origin;
    rpId = url.hostname;
  });
  after(async () => driver?.close());

  describe("POST /departments/{code}/reviewer-invitations and GET …/reviewers", function () {
    it("the department's key or an administrator invites; another department's key is 403; audited", async function () {
      const { reviewerId, body } = await invite("Wanda Water");
      expect(body.invitationUrl).to.match(new RegExp(`^${origin}/console/#/invite/[A-Za-z0-9_-]{43}$`));
      const hours = (Date.parse(body.expiresAt) - Date.now()) / 3_600_000;
      expect(hours).to.be.within(71.9, 72);
      // Only the token's sha256 is stored.
      const row = await invitationRow(reviewerId);
      expect(row.token_hash)
        .to.match(/^[0-9a-f]{64}$/)
        .and.not.equal(tokenOf(body.invitationUrl));

      const byAdmin = await admin.post(`/departments/${water.code}/reviewer-invitations`, {
        name: "Adam Admin-Invited",
      });
      expect(byAdmin.status, JSON.stringify(byAdmin.body)).to.equal(201);

      expectError(await asFire.post(`/departments/${water.code}/reviewer-invitations`, { name: "Intruder" }), 403);
      expectError(await asFire.get(`/departments/${water.code}/reviewers`), 403);
      expectError(await admin.post(`/departments/NOPE_${run}/reviewer-invitations`, { name: "X" }), 404);
      expect((await asWater.post(`/departments/${water.code}/reviewer-invitations`, { name: "" })).status).to.equal(
        400,
      );

      const list = await asWater.get(`/departments/${water.code}/reviewers`);
      expect(list.status).to.equal(200);
      const wanda = list.body.reviewers.find((r: Json) => r.id === reviewerId);
      expect(wanda).to.deep.include({ name: "Wanda Water", passkeys: [] });
      expect(wanda.invitation).to.deep.equal({ expiresAt: body.expiresAt, used: false });
      expect(list.body.reviewers.map((r: Json) => r.name)).to.include("Adam Admin-Invited");

      const audited = await reviewerAudit(reviewerId);
      expect(audited.map((a) => [a.action, a.actor_type, a.actor_id])).to.deep.equal([
        ["INVITE", "DEPARTMENT", water.code],
      ]);
      const adminAudit = await reviewerAudit(byAdmin.body.reviewerId);
      expect(adminAudit.map((a) => [a.action, a.actor_type])).to.deep.equal([["INVITE", "ADMIN"]]);
    });
  });

  describe("registration through the invitation", function () {
    it("registers an ES256 passkey with user verification, stores its P-256 key and signs the browser in", async function () {
      const { reviewerId, token } = await invite("Rita Registrar");
      const passkey = createSoftwarePasskey();
      const browser = consoleBrowser(api, origin);
      const options = await browser.post("/console/invitations/registration-options", {
        token,
        deviceName: "Rita's phone",
      });
      expect(options.status, JSON.stringify(options.body)).to.equal(200);
      const o = options.body.options;
      expect(o.rp.id).to.equal(rpId);
      expect(o.pubKeyCredParams).to.deep.equal([{ alg: -7, type: "public-key" }]);
      expect(o.authenticatorSelection).to.deep.include({ residentKey: "required", userVerification: "required" });
      expect(o.attestation).to.equal("none");
      expect(o.user.name).to.equal("Rita Registrar");

      const done = await browser.post("/console/invitations/register", {
        token,
        response: registrationResponse(passkey, o, ceremony()),
      });
      expect(done.status, JSON.stringify(done.body)).to.equal(201);
      expect(done.body).to.deep.equal({
        reviewer: { id: reviewerId, name: "Rita Registrar", departmentCode: water.code },
        passkey: { id: passkey.id, deviceName: "Rita's phone", publicKey: passkey.publicKey },
      });
      const cookie = done.headers.getSetCookie().find((c) => c.startsWith("console_session="))!;
      expect(cookie).to.match(/^console_session=[A-Za-z0-9_-]{43};/);
      expect(cookie)
        .to.match(/; HttpOnly/)
        .and.match(/; SameSite=Strict/)
        .and.match(/; Path=\//);
      expect(cookie).to.match(/; Max-Age=43200/);
      expect(cookie).not.to.match(/Secure/); // NODE_ENV=test: http://localhost-style origins

      const me = await browser.get("/console/me");
      expect(me.status, JSON.stringify(me.body)).to.equal(200);
      expect(me.body.reviewer).to.deep.equal({ id: reviewerId, name: "Rita Registrar" });
      expect(me.body.passkey).to.deep.equal({
        id: passkey.id,
        deviceName: "Rita's phone",
        publicKey: passkey.publicKey,
      });
      expect(me.body.department).to.deep.include({ code: water.code, name: "Water Board", custody: "CUSTODIAL" });
      expect(me.body.department.walletAddress.toLowerCase()).to.equal(water.walletAddress.toLowerCase());

      const list = await asWater.get(`/departments/${water.code}/reviewers`);
      const rita = list.body.reviewers.find((r: Json) => r.id === reviewerId);
      expect(rita.invitation.used).to.equal(true);
      expect(rita.passkeys).to.have.length(1);
      expect(rita.passkeys[0]).to.deep.include({
        id: passkey.id,
        deviceName: "Rita's phone",
        publicKey: passkey.publicKey,
      });
      const stored = await driver.core.pool.query(`SELECT p256_key FROM reviewer_passkeys WHERE id = $1`, [passkey.id]);
      expect(stored.rows[0].p256_key).to.equal(passkey.publicKey);

      // The invitation is used up: both ceremony steps refuse it, as they refuse an unknown one.
      const again = await consoleBrowser(api, origin).post("/console/invitations/registration-options", {
        token,
        deviceName: "Second",
      });
      expectError(again, 410, "INVITATION_INVALID");
      const reuse = await consoleBrowser(api, origin).post("/console/invitations/register", {
        token,
        response: registrationResponse(createSoftwarePasskey(), o, ceremony()),
      });
      expectError(reuse, 410, "INVITATION_INVALID");

      const audited = await reviewerAudit(reviewerId);
      expect(audited.map((a) => a.action)).to.deep.equal(["INVITE", "REGISTER_PASSKEY"]);
      // The person, not just the department: the reviewer registered their own passkey.
      expect(audited[1]).to.deep.include({ actor_type: "REVIEWER", actor_id: reviewerId });
      expect(audited[1].new_value).to.deep.include({ passkeyId: passkey.id, publicKey: passkey.publicKey });
    });

    it("another origin, another RP ID or no user verification: 400 PASSKEY_INVALID, nothing stored", async function () {
      const { reviewerId, token } = await invite("Otto Origin");
      const passkey = createSoftwarePasskey();
      const browser = consoleBrowser(api, origin);
      const options = (await browser.post("/console/invitations/registration-options", { token, deviceName: "X" })).body
        .options;
      for (const lie of [
        { origin: "https://evil.example", rpId },
        { origin, rpId: "evil.example" },
        { origin, rpId, flags: FLAG_UP | FLAG_AT },
      ]) {
        const refused = await browser.post("/console/invitations/register", {
          token,
          response: registrationResponse(passkey, options, lie),
        });
        expectError(refused, 400, "PASSKEY_INVALID");
        expect(refused.headers.getSetCookie()).to.deep.equal([]);
      }
      const stored = await driver.core.pool.query(`SELECT 1 FROM reviewer_passkeys WHERE reviewer_id = $1`, [
        reviewerId,
      ]);
      expect(stored.rows).to.deep.equal([]);
      expect((await invitationRow(reviewerId)).used_at).to.equal(null);
      expect((await reviewerAudit(reviewerId)).map((a) => a.action)).to.deep.equal(["INVITE"]);
      // The invitation still works with an honest answer.
      const done = await browser.post("/console/invitations/register", {
        token,
        response: registrationResponse(passkey, options, ceremony()),
      });
      expect(done.status).to.equal(201);
    });

    it("an expired, an unknown or a garbled invitation: 410 INVITATION_INVALID, nothing recorded", async function () {
      const { reviewerId, token } = await invite("Eve Expired");
      await driver.core.pool.query(
        `UPDATE reviewer_invitations SET expires_at = now() - interval '1 second' WHERE reviewer_id = $1`,
        [reviewerId],
      );
      const before = await invitationRow(reviewerId);
      const auditCount = async () =>
        Number((await driver.core.pool.query(`SELECT count(*) FROM audit_logs`)).rows[0].count);
      const audits = await auditCount();
      const browser = consoleBrowser(api, origin);
      for (const t of [token, "A".repeat(43), "not-a-token"]) {
        const refused = await browser.post("/console/invitations/registration-options", { token: t, deviceName: "X" });
        expect(refused.status, t).to.equal(410);
        expect(refused.body).to.deep.include({ code: "INVITATION_INVALID" });
        const register = await browser.post("/console/invitations/register", {
          token: t,
          response: registrationResponse(createSoftwarePasskey(), { challenge: "AAAA" }, ceremony()),
        });
        expect(register.status, t).to.equal(410);
        expect(register.body.code).to.equal("INVITATION_INVALID");
      }
      expect(await invitationRow(reviewerId)).to.deep.equal(before);
      expect(await auditCount()).to.equal(audits);
    });
  });

  describe("sign-in, me, sign-out", function () {
    it("a registered passkey signs in (discoverable: no user name), reads /console/me and signs out; audited", async function () {
      const { reviewerId, passkey } = await registered("Sam Signin");
      const browser = consoleBrowser(api, origin);
      expectError(await browser.get("/console/me"), 401);

      const options = await browser.post("/console/sign-in/options", {});
      expect(options.body.options).to.deep.include({ rpId, userVerification: "required" });
      expect(options.body.options.allowCredentials ?? []).to.deep.equal([]);
      const { answer } = await signIn(browser, passkey);
      expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
      expect(answer.body).to.deep.equal({
        reviewer: { id: reviewerId, name: "Sam Signin" },
        department: { code: water.code, name: "Water Board" },
      });
      const cookie = answer.headers.getSetCookie()[0]!;
      expect(cookie)
        .to.match(/HttpOnly/)
        .and.match(/SameSite=Strict/)
        .and.match(/Path=\//);
      expect((await browser.get("/console/me")).body.reviewer.id).to.equal(reviewerId);
      // The API key is a department, not a reviewer: /console/me is for sessions.
      expectError(await asWater.get("/console/me"), 403);

      const out = await browser.post("/console/sign-out");
      expect(out.status).to.equal(204);
      expect(out.headers.getSetCookie()[0]).to.match(/^console_session=; Max-Age=0/);
      expect(browser.cookie()).to.equal(undefined);
      // The old cookie value is dead on the server too.
      browser.setCookie(cookie.split(";")[0]);
      expectError(await browser.get("/console/me"), 401);

      const actions = (await reviewerAudit(reviewerId)).map((a) => a.action);
      expect(actions).to.deep.equal(["INVITE", "REGISTER_PASSKEY", "SIGN_IN", "SIGN_OUT"]);
    });

    it("a replayed assertion, another origin or RP ID, or a counter that went back: 401 PASSKEY_INVALID", async function () {
      const { passkey } = await registered("Ray Replay");
      const browser = consoleBrowser(api, origin);
      const { answer, response } = await signIn(browser, passkey);
      expect(answer.status).to.equal(200);
      expectError(await consoleBrowser(api, origin).post("/console/sign-in", { response }), 401, "PASSKEY_INVALID");

      for (const lie of [{ origin: "https://evil.example" }, { rpId: "evil.example" }, { signCount: 1 }]) {
        const other = consoleBrowser(api, origin);
        const { answer: refused } = await signIn(other, passkey, lie);
        expectError(refused, 401, "PASSKEY_INVALID");
        expect(other.cookie()).to.equal(undefined);
      }
      // A passkey nobody registered.
      const strangerKey = createSoftwarePasskey();
      const { answer: stranger } = await signIn(consoleBrowser(api, origin), strangerKey);
      expectError(stranger, 401, "PASSKEY_INVALID");

      // Each refusal is audited as a failed sign-in of the credential claimed, by nobody signed in.
      const failed = await driver.core.pool.query(
        `SELECT entity_id, actor_type, new_value FROM audit_logs
          WHERE entity_type = 'REVIEWER' AND action = 'SIGN_IN_FAILED' AND entity_id = ANY($1) ORDER BY created_at`,
        [[passkey.id, strangerKey.id]],
      );
      expect(failed.rows.map((r) => r.entity_id)).to.deep.equal([...Array(4).fill(passkey.id), strangerKey.id]);
      expect(failed.rows.every((r) => r.actor_type === "ANONYMOUS" && r.new_value.method === "PASSKEY")).to.equal(true);
      expect(failed.rows[0].new_value.reason).to.match(/challenge is unknown, expired or already used/);
    });
  });

  describe("what a console session may reach", function () {
    it("department reads and the console: yes; the department's administration: 403 FORBIDDEN", async function () {
      const { browser } = await registered("Cora Console");
      expect((await browser.get(`/requests/pending?department=${water.code}`)).status).to.equal(200);
      expect((await browser.get(`/departments/${water.code}`)).status).to.equal(200);

      for (const [method, route] of [
        ["POST", `/departments/${water.code}/reviewer-invitations`],
        ["GET", `/departments/${water.code}/reviewers`],
        ["POST", `/departments/${water.code}/regenerate-api-key`],
        ["GET", "/webhooks"],
        ["POST", "/webhooks"],
        ["GET", `/departments/${water.code}/stats`],
        ["POST", `/departments/${water.code}/wallet-change/refuse`],
      ] as const) {
        const answer =
          method === "GET"
            ? await browser.get(route)
            : await browser.post(
                route,
                method === "POST" && route === "/webhooks"
                  ? { url: "https://example.org/h", events: ["request.created"] }
                  : { name: "Nope" },
              );
        expect(answer.status, `${method} ${route}: ${JSON.stringify(answer.body)}`).to.equal(403);
        expect(answer.body.code).to.equal("FORBIDDEN");
      }
      expect((await asWater.get(`/departments/${water.code}/reviewers`)).status).to.equal(200);
    });

    it("a cookie-authenticated write without the console's Origin: 403 CSRF_REJECTED", async function () {
      const { reviewerId, browser } = await registered("Chris Csrf");
      for (const headers of [{ origin: "https://evil.example" }, { origin: "null" }]) {
        expectError(await browser.post("/console/sign-out", {}, headers), 403, "CSRF_REJECTED");
      }
      const noOrigin = await fetch(`${api}/api/v1/console/sign-out`, {
        method: "POST",
        headers: { cookie: browser.cookie()! },
      });
      expect(noOrigin.status).to.equal(403);
      expect(((await noOrigin.json()) as Json).code).to.equal("CSRF_REJECTED");
      // Still signed in: nothing was done.
      expect((await browser.get("/console/me")).status).to.equal(200);
      expect((await reviewerAudit(reviewerId)).map((a) => a.action)).not.to.include("SIGN_OUT");
    });
  });

  describe("session expiry and removal", function () {
    const sessionOf = async (reviewerId: string) =>
      (
        await driver.core.pool.query(`SELECT * FROM console_sessions WHERE reviewer_id = $1 ORDER BY created_at DESC`, [
          reviewerId,
        ])
      ).rows[0];

    it("ends after 30 idle minutes and 12 hours after sign-in", async function () {
      const { reviewerId, browser } = await registered("Ida Idle");
      const session = await sessionOf(reviewerId);
      expect((Date.parse(session.expires_at) - Date.parse(session.created_at)) / 3_600_000).to.be.closeTo(12, 0.01);
      await driver.core.pool.query(
        `UPDATE console_sessions SET last_seen_at = now() - interval '29 minutes' WHERE token_hash = $1`,
        [session.token_hash],
      );
      expect((await browser.get("/console/me")).status).to.equal(200);
      // That request moved the idle expiry on.
      expect(Date.now() - Date.parse((await sessionOf(reviewerId)).last_seen_at)).to.be.below(60_000);
      await driver.core.pool.query(
        `UPDATE console_sessions SET last_seen_at = now() - interval '31 minutes' WHERE token_hash = $1`,
        [session.token_hash],
      );
      expectError(await browser.get("/console/me"), 401);

      const { reviewerId: other, browser: second } = await registered("Abe Absolute");
      await driver.core.pool.query(
        `UPDATE console_sessions SET expires_at = now() - interval '1 second' WHERE reviewer_id = $1`,
        [other],
      );
      expectError(await second.get("/console/me"), 401);
    });

    it("a removed passkey cannot sign in and its sessions end; a removed reviewer likewise; audited", async function () {
      const { reviewerId, passkey, browser } = await registered("Pia Passkey");
      const wrongDepartment = await asFire.delete(
        `/departments/${water.code}/reviewers/${reviewerId}/passkeys/${passkey.id}`,
      );
      expect(wrongDepartment.status).to.equal(403);
      const removed = await asWater.delete(`/departments/${water.code}/reviewers/${reviewerId}/passkeys/${passkey.id}`);
      expect(removed.status).to.equal(204);
      expectError(await browser.get("/console/me"), 401);
      const { answer } = await signIn(consoleBrowser(api, origin), passkey);
      expectError(answer, 401, "PASSKEY_INVALID");
      expectError(
        await asWater.delete(`/departments/${water.code}/reviewers/${reviewerId}/passkeys/${passkey.id}`),
        404,
      );

      const { reviewerId: rex, passkey: rexKey, browser: rexBrowser } = await registered("Rex Removed");
      expect((await admin.delete(`/departments/${water.code}/reviewers/${rex}`)).status).to.equal(204);
      expectError(await rexBrowser.get("/console/me"), 401);
      expect((await signIn(consoleBrowser(api, origin), rexKey)).answer.status).to.equal(401);
      const list = await asWater.get(`/departments/${water.code}/reviewers`);
      expect(list.body.reviewers.map((r: Json) => r.id)).not.to.include(rex);
      expectError(await asWater.delete(`/departments/${water.code}/reviewers/${rex}`), 404);

      expect((await reviewerAudit(reviewerId)).map((a) => a.action)).to.deep.equal([
        "INVITE",
        "REGISTER_PASSKEY",
        "REMOVE_PASSKEY",
      ]);
      const rexAudit = await reviewerAudit(rex);
      expect(rexAudit.map((a) => [a.action, a.actor_type])).to.deep.equal([
        ["INVITE", "DEPARTMENT"],
        ["REGISTER_PASSKEY", "REVIEWER"],
        ["REMOVE", "ADMIN"],
      ]);
      expect(rexAudit[2].old_value.passkeys).to.deep.equal([{ id: rexKey.id, publicKey: rexKey.publicKey }]);

      // The administrator's audit log lists reviewer changes under their own entity type.
      const logs = await admin.get(`/admin/audit-logs?entityType=REVIEWER&entityId=${rex}`);
      expect(logs.status).to.equal(200);
      expect(logs.body.logs.map((l: Json) => l.action).sort()).to.deep.equal(["INVITE", "REGISTER_PASSKEY", "REMOVE"]);
    });
  });
});
