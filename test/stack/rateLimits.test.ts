/**
 * Rate limits on their own API processes (same database and chain, low limits): authentication per IP, failed
 * credentials counted as attempts, writes per caller, reads never limited; 429 RATE_LIMITED with Retry-After.
 */
import { expect } from "chai";
import { RateLimiter } from "../../api/src/http/rateLimit.ts";
import { applicantToken, clientToken } from "./support/authClient.ts";
import { apiClient as http } from "./support/httpClient.ts";
import { current } from "./support/stackFixture.ts";

const tokenRequest = (api: string, clientId: string, clientSecret: string) =>
  fetch(`${api}/api/v1/auth/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "client_credentials",
      client_id: clientId,
      client_secret: clientSecret,
      scope: "admin",
    }),
  });

describe("rate limits (429 with Retry-After, configurable)", function () {
  it("limits authentication per IP, counting failed credentials anywhere, and leaves reads alone", async function () {
    const stack = current();
    const limited = await stack.startExtraApi(undefined, {
      RATE_LIMIT_AUTH_PER_MINUTE: "5",
      RATE_LIMIT_WRITE_PER_MINUTE: "0",
    });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++)
        statuses.push((await tokenRequest(limited.url, stack.admin.clientId, "wrong-secret")).status);
      // A wrong API key on a department route is an authentication attempt too.
      statuses.push(
        (
          await fetch(`${limited.url}/api/v1/requests/pending`, {
            headers: { "x-api-key": "guess", "x-department-code": "NOBODY" },
          })
        ).status,
      );
      // Refused credentials (OAuth answers 400 invalid_client; the department route 401), not yet limited.
      expect(statuses.every((status) => status === 400 || status === 401)).to.equal(true);
      const blocked = await tokenRequest(limited.url, stack.admin.clientId, stack.admin.clientSecret);
      expect(blocked.status).to.equal(429);
      const retryAfter = Number(blocked.headers.get("retry-after"));
      expect(retryAfter).to.be.within(1, 12); // 5 per minute: one more every 12 s
      const body = (await blocked.json()) as { code: string; message: string; details: { retryAfterSeconds: number } };
      expect(body.code).to.equal("RATE_LIMITED");
      expect(body.details.retryAfterSeconds).to.equal(retryAfter);
      // Reads are not limited.
      for (let i = 0; i < 20; i++) expect((await fetch(`${limited.url}/api/v1/verify/issuer`)).status).to.equal(200);
      // The main API (no limit) still signs the same client in.
      expect((await tokenRequest(stack.api.url, stack.admin.clientId, stack.admin.clientSecret)).status).to.equal(200);
    } finally {
      await limited.stop();
    }
  });

  it("limits writes per caller (rejected writes count too); another caller keeps its own allowance", async function () {
    const stack = current();
    const limited = await stack.startExtraApi(undefined, {
      RATE_LIMIT_AUTH_PER_MINUTE: "0",
      RATE_LIMIT_WRITE_PER_MINUTE: "3",
    });
    try {
      // Tokens from the main API are valid on every API process (one issuer and key).
      const admin = http(
        limited.url,
        await clientToken(stack.api.url, stack.admin.clientId, stack.admin.clientSecret, "admin"),
      );
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++)
        statuses.push((await admin.post("/departments", { code: "lower case is invalid" })).status);
      expect(statuses).to.deep.equal([400, 400, 400]);
      const blocked = await admin.post("/departments", { code: "lower case is invalid" });
      expect(blocked.status).to.equal(429);
      expect(blocked.body.code).to.equal("RATE_LIMITED");
      expect(Number(blocked.headers.get("retry-after"))).to.be.within(1, 20);
      // Reads by the same caller still work.
      expect((await admin.get("/departments")).status).to.equal(200);
      // Another caller from the same address has its own allowance.
      const applicant = http(
        limited.url,
        await applicantToken(stack.api.url, { id: `limits-${Date.now()}`, name: "Lim Its" }),
      );
      expect((await applicant.post("/requests", { requestType: "NOT_A_TYPE" })).status).to.equal(400);
    } finally {
      await limited.stop();
    }
  });

  it("refills continuously: one more request per (60 / limit) seconds, up to the limit", function () {
    let now = 0;
    const limiter = new RateLimiter({ authPerMinute: 6, writePerMinute: 2 }, () => now);
    for (let i = 0; i < 6; i++) limiter.take("auth", "1.2.3.4");
    expect(() => limiter.take("auth", "1.2.3.4"))
      .to.throw()
      .with.property("status", 429);
    limiter.take("auth", "5.6.7.8"); // another address
    now += 9_999;
    const early = (() => {
      try {
        limiter.take("auth", "1.2.3.4");
      } catch (error) {
        return error as { headers: Record<string, string> };
      }
    })();
    expect(early?.headers["Retry-After"]).to.equal("1");
    now += 1;
    limiter.take("auth", "1.2.3.4"); // 10 s later: one token back
    now += 10 * 60_000;
    for (let i = 0; i < 6; i++) limiter.take("auth", "1.2.3.4"); // full again, never above the limit
    expect(() => limiter.take("auth", "1.2.3.4")).to.throw();
    limiter.take("write", "applicant:a");
    limiter.take("write", "applicant:a");
    expect(() => limiter.take("write", "applicant:a")).to.throw();
    limiter.take("write", "applicant:b");
    const off = new RateLimiter({ authPerMinute: 0, writePerMinute: 0 }, () => now);
    for (let i = 0; i < 1000; i++) off.take("write", "x");
  });
});
