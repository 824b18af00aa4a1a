/**
 * Rate limits on their own API processes (same database and chain, low limits): the sign-in endpoints per address,
 * failed credentials per credential and address and per address (never locking out another credential), writes and
 * authenticated reads per caller; 429 RATE_LIMITED with Retry-After.
 */
import { expect } from "chai";
import { FailedCredentials, MemoryBuckets, PostgresBuckets, RateLimiter } from "../../api/src/http/rateLimit.ts";
import { applicantToken, clientToken, createClient } from "./support/authClient.ts";
import { apiClient as http, expectError } from "./support/httpClient.ts";
import { productionEnv } from "./support/productionEnv.ts";
import { current } from "./support/stackFixture.ts";

const tokenRequest = (api: string, clientId: string, clientSecret: string, from?: string) =>
  fetch(`${api}/api/v1/auth/token`, {
    method: "POST",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      ...(from ? { "x-forwarded-for": from } : {}),
    },
    body: new URLSearchParams({ grant_type: "client_credentials", client_id: clientId, client_secret: clientSecret }),
  });

/** A 429 in the Error shape, with Retry-After equal to details.retryAfterSeconds and within `maxSeconds`. */
async function expectRateLimited(response: Response, maxSeconds: number): Promise<void> {
  expect(response.status).to.equal(429);
  const retryAfter = Number(response.headers.get("retry-after"));
  expect(retryAfter).to.be.within(1, maxSeconds);
  const body = (await response.json()) as {
    code: string;
    message: string;
    details: { retryAfterSeconds: number; limitPerMinute: number };
  };
  expect(body).to.have.keys("code", "message", "details");
  expect(body.code).to.equal("RATE_LIMITED");
  expect(body.message).to.be.a("string");
  expect(body.details.retryAfterSeconds).to.equal(retryAfter);
}

describe("rate limits (429 with Retry-After, configurable)", function () {
  it("61 bad bearer tokens from one address: the 61st is refused, but the administrator there still signs in and reads", async function () {
    const stack = current();
    // The default of 60 failures a minute; one proxy in front, so this test's requests all come from one client.
    const limited = await stack.startExtraApi(
      undefined,
      await productionEnv(stack, { TRUST_PROXY_HOPS: "1", RATE_LIMIT_AUTH_PER_MINUTE: "60" }),
    );
    try {
      const from = { "x-forwarded-for": "203.0.113.61" };
      const statuses: number[] = [];
      for (let i = 0; i < 61; i++) {
        const response = await fetch(`${limited.url}/api/v1/departments`, {
          headers: { ...from, authorization: `Bearer not-a-token-${i}` },
        });
        statuses.push(response.status);
      }
      expect(statuses.slice(0, 60).every((status) => status === 401)).to.equal(true);
      expect(statuses[60]).to.equal(429); // the address's failures are spent
      // Neither the sign-in endpoints nor valid credentials from the same address are locked out.
      const signIn = await tokenRequest(
        limited.url,
        stack.admin.clientId,
        stack.admin.clientSecret,
        from["x-forwarded-for"],
      );
      expect(signIn.status).to.equal(200);
      const { access_token: token } = (await signIn.json()) as { access_token: string };
      const read = await fetch(`${limited.url}/api/v1/departments`, {
        headers: { ...from, authorization: `Bearer ${token}` },
      });
      expect(read.status).to.equal(200);
      const authorize = await fetch(
        `${limited.url}/api/v1/auth/identitylocker/authorize?${new URLSearchParams({
          client_id: "https://portal.example",
          redirect_uri: "https://portal.example/cb",
          state: "s",
          code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
          code_challenge_method: "S256",
        })}`,
        { headers: from, redirect: "manual" },
      );
      expect(authorize.status).to.equal(302);
    } finally {
      await limited.stop();
    }
  });

  it("counts a client id's failed secrets per address: refused before its secret is checked there, not elsewhere, not for other clients", async function () {
    const stack = current();
    const admin = await clientToken(stack.api.url, stack.admin.clientId, stack.admin.clientSecret, "admin");
    const reader = await createClient(stack.api.url, admin, `Limited reader ${Date.now()}`, ["applications:read"]);
    const limited = await stack.startExtraApi(
      undefined,
      await productionEnv(stack, { TRUST_PROXY_HOPS: "1", RATE_LIMIT_AUTH_PER_MINUTE: "5" }),
    );
    try {
      const here = "198.51.100.10";
      for (let i = 0; i < 5; i++)
        expect((await tokenRequest(limited.url, reader.clientId, `wrong-${i}`, here)).status).to.equal(401);
      await expectRateLimited(await tokenRequest(limited.url, reader.clientId, "wrong-again", here), 12);
      // Spent for this client from this address: even its right secret is refused, unchecked, for a while.
      await expectRateLimited(await tokenRequest(limited.url, reader.clientId, reader.clientSecret, here), 12);
      // The administrator at the same address, and the same client from another one, sign in.
      expect((await tokenRequest(limited.url, stack.admin.clientId, stack.admin.clientSecret, here)).status).to.equal(
        200,
      );
      expect((await tokenRequest(limited.url, reader.clientId, reader.clientSecret, "198.51.100.11")).status).to.equal(
        200,
      );
      // The address's own failures are spent too: another wrong secret from it is 429, not one more guess.
      await expectRateLimited(await tokenRequest(limited.url, stack.admin.clientId, "wrong-admin-secret", here), 12);
    } finally {
      await limited.stop();
    }
  });

  it("limits authenticated reads per caller (429 in the Error shape with Retry-After); other callers keep theirs", async function () {
    const stack = current();
    const admin = await clientToken(stack.api.url, stack.admin.clientId, stack.admin.clientSecret, "admin");
    const reader = await createClient(stack.api.url, admin, `Reader ${Date.now()}`, ["applications:read"]);
    const readerToken = await clientToken(stack.api.url, reader.clientId, reader.clientSecret);
    const limited = await stack.startExtraApi(
      undefined,
      await productionEnv(stack, { RATE_LIMIT_READ_PER_MINUTE: "3" }),
    );
    try {
      const read = (token: string) =>
        fetch(`${limited.url}/api/v1/departments`, { headers: { authorization: `Bearer ${token}` } });
      for (let i = 0; i < 3; i++) expect((await read(admin)).status).to.equal(200);
      await expectRateLimited(await read(admin), 20);
      expect((await read(readerToken)).status).to.equal(200);
      // Public reads are limited apart (per address), not by the read limit.
      expect((await fetch(`${limited.url}/api/v1/verify/issuer`)).status).to.equal(200);
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
      expectError(blocked, 429, "RATE_LIMITED");
      expect(Number(blocked.headers.get("retry-after"))).to.be.within(1, 20);
      // Reads by the same caller still work.
      expect((await admin.get("/departments")).status).to.equal(200);
      // Another caller from the same address has its own allowance.
      const applicant = http(
        limited.url,
        await applicantToken(stack.api.url, { id: `limits-${Date.now()}`, name: "Lim Its" }),
      );
      expectError(await applicant.post("/requests", { requestType: "NOT_A_TYPE" }), 400);
    } finally {
      await limited.stop();
    }
  });

  it("holds across API processes: N + 1 writes, or failed credentials, spread over two processes get exactly one 429", async function () {
    const stack = current();
    // Behind a proxy (so the test can be one address): a production process, with low limits.
    const env = await productionEnv(stack, {
      TRUST_PROXY_HOPS: "1",
      RATE_LIMIT_WRITE_PER_MINUTE: "6",
      RATE_LIMIT_AUTH_PER_MINUTE: "4",
    });
    const first = await stack.startExtraApi(undefined, env);
    const second = await stack.startExtraApi(undefined, env);
    try {
      // A caller of its own (writes are counted per caller, refused ones too: here 403, not its scope).
      const admin = await clientToken(stack.api.url, stack.admin.clientId, stack.admin.clientSecret, "admin");
      const caller = await createClient(stack.api.url, admin, `Shared limits ${Date.now()}`, ["applications:read"]);
      const token = await clientToken(stack.api.url, caller.clientId, caller.clientSecret);
      const writes: number[] = [];
      for (let i = 0; i < 7; i++)
        writes.push(
          (await http(i % 2 === 0 ? first.url : second.url, token).post("/departments", { code: "SHARED" })).status,
        );
      expect(writes).to.deep.equal([403, 403, 403, 403, 403, 403, 429]);
      // Failed bearer tokens from one address: 4 a minute for the address, whichever process sees them.
      const from = `2001:db8:${(Date.now() % 0xffff).toString(16)}::1`; // an address no other test uses
      const failures: number[] = [];
      for (let i = 0; i < 5; i++) {
        const response = await fetch(`${i % 2 === 0 ? first.url : second.url}/api/v1/departments`, {
          headers: { "x-forwarded-for": from, authorization: `Bearer shared-bad-token-${i}` },
        });
        failures.push(response.status);
      }
      expect(failures).to.deep.equal([401, 401, 401, 401, 429]);
    } finally {
      await Promise.all([first.stop(), second.stop()]);
    }
  });

  it("counts in each process's own buckets while Postgres cannot be asked: limits still hold, nobody is refused for it", async function () {
    let calls = 0;
    const down = {
      query: async () => {
        calls++;
        throw new Error("connect ECONNREFUSED 127.0.0.1:5432");
      },
    } as unknown as ConstructorParameters<typeof PostgresBuckets>[0];
    const limiter = new RateLimiter({ authPerMinute: 0, writePerMinute: 3 }, new PostgresBuckets(down));
    for (let i = 0; i < 3; i++) await limiter.take("write", "applicant:a");
    await expectRefused(limiter.take("write", "applicant:a"));
    await limiter.take("write", "applicant:b");
    expect(calls).to.be.greaterThan(0); // Postgres was asked first each time
  });

  it("refills continuously: one more request per (60 / limit) seconds, up to the limit", async function () {
    let now = 0;
    const limiter = new RateLimiter({ authPerMinute: 6, writePerMinute: 2 }, new MemoryBuckets(() => now));
    for (let i = 0; i < 6; i++) await limiter.take("failure", "1.2.3.4");
    await expectRefused(limiter.take("failure", "1.2.3.4"));
    await limiter.take("failure", "5.6.7.8"); // another address
    now += 9_999;
    expect((await expectRefused(limiter.take("failure", "1.2.3.4"))).headers["Retry-After"]).to.equal("1");
    now += 1;
    await limiter.take("failure", "1.2.3.4"); // 10 s later: one token back
    now += 10 * 60_000;
    for (let i = 0; i < 6; i++) await limiter.take("failure", "1.2.3.4"); // full again, never above the limit
    await expectRefused(limiter.take("failure", "1.2.3.4"));
    await limiter.take("write", "applicant:a");
    await limiter.take("write", "applicant:a");
    await expectRefused(limiter.take("write", "applicant:a"));
    await limiter.take("write", "applicant:b");
    // The sign-in endpoints take five times the auth limit per address.
    for (let i = 0; i < 30; i++) await limiter.take("auth", "9.9.9.9");
    await expectRefused(limiter.take("auth", "9.9.9.9"));
    const off = new RateLimiter({ authPerMinute: 0, writePerMinute: 0 }, new MemoryBuckets(() => now));
    for (let i = 0; i < 1000; i++) await off.take("write", "x");
  });

  it("failed credentials: a spent credential is refused before it is checked, another credential from its address is not", async function () {
    let now = 0;
    const failures = new FailedCredentials(
      new RateLimiter({ authPerMinute: 3, writePerMinute: 0 }, new MemoryBuckets(() => now)),
    );
    await failures.admit("client:a", "10.0.0.1");
    await failures.failed("client:a", "10.0.0.1");
    await failures.failed("client:a", "10.0.0.1");
    await failures.failed("client:a", "10.0.0.1");
    await expectRefused(failures.admit("client:a", "10.0.0.1"));
    await failures.admit("client:a", "10.0.0.2"); // the same credential elsewhere
    await failures.admit("client:b", "10.0.0.1"); // another credential here
    // ...whose failure is refused, though: the address's failures are spent.
    await expectRefused(failures.failed("client:b", "10.0.0.1"));
    now += 20_000; // one failure back per 20 s
    await failures.admit("client:a", "10.0.0.1");
    await new FailedCredentials(undefined).failed("client:a", "10.0.0.1"); // limits off: nothing counted
  });
});

/** The 429 the promise is rejected with. */
async function expectRefused(promise: Promise<void>): Promise<{ status: number; headers: Record<string, string> }> {
  const error = await promise.then(
    () => undefined,
    (e: { status: number; headers: Record<string, string> }) => e,
  );
  expect(error).to.have.property("status", 429);
  return error!;
}
