import { createHmac, timingSafeEqual } from "node:crypto";
import { expect } from "chai";
import { Webhook } from "standardwebhooks";
import { checkWebhookUrl } from "../../api/src/webhooks/urlSafety.ts";
import { clientToken } from "./support/authClient.ts";
import { createDepartment, departmentClient } from "./support/departmentClient.ts";
import { createDriver, type Driver } from "./support/platformDriver.ts";
import { current } from "./support/stackFixture.ts";
import { startReceiver } from "./support/webhookReceiver.ts";
import { letters } from "./support/sessions.ts";
import { expectError } from "./support/httpClient.ts";

describe("webhooks: registration, signed test deliveries, logs (HTTP, real stack)", function () {
  const tag = letters(String(Date.now() % 1e8));
  const secret = "a-long-shared-secret-for-hmac-signing";
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let driver: Driver;
  let admin: string;
  let mine: ReturnType<typeof departmentClient>;
  let theirs: ReturnType<typeof departmentClient>;
  let webhookId: string;

  before(async function () {
    receiver = await startReceiver();
    driver = await createDriver(current());
    const api = current().api.url;
    admin = await clientToken(api, current().admin.clientId, current().admin.clientSecret, "admin");
    mine = departmentClient(api, await createDepartment(api, admin, { code: `HOOKS_${tag}`, name: "Hooks" }));
    theirs = departmentClient(api, await createDepartment(api, admin, { code: `OTHERS_${tag}`, name: "Others" }));
  });
  after(async () => {
    await receiver?.stop();
    await driver?.close();
  });

  it("registers a webhook for both event sets, for the caller's own department", async function () {
    const response = await mine.post("/webhooks", {
      url: receiver.url,
      events: ["APPROVAL_REQUIRED", "application.submitted", "certificate.revoked"],
      secret,
    });
    expect(response.status).to.equal(201);
    expect(response.body).to.include({ departmentCode: `HOOKS_${tag}`, url: receiver.url, isActive: true });
    expect(response.body.events).to.deep.equal(["APPROVAL_REQUIRED", "application.submitted", "certificate.revoked"]);
    expect(response.body).to.not.have.property("secret");
    webhookId = response.body.webhookId;
    const { rows } = await driver.core.pool.query(`SELECT secret_sealed FROM webhooks WHERE id = $1`, [webhookId]);
    expect(rows[0].secret_sealed.toString("utf8")).to.not.include(secret); // sealed, not stored in clear
  });

  it("refuses bad registrations with 400 and another department's code with 403", async function () {
    for (const body of [
      { url: receiver.url, events: ["NOT_AN_EVENT"], secret },
      { url: receiver.url, events: [], secret },
      { url: receiver.url, events: ["APPROVAL_REQUIRED"], secret: "short" },
      { url: "ftp://127.0.0.1/hooks", events: ["APPROVAL_REQUIRED"], secret },
    ]) {
      const response = await mine.post("/webhooks", body);
      expect(response.status, JSON.stringify(body)).to.equal(400);
      expect(["VALIDATION_ERROR", "INVALID_WEBHOOK_URL"]).to.include(response.body.code);
    }
    const other = await mine.post("/webhooks", {
      departmentCode: `OTHERS_${tag}`,
      url: receiver.url,
      events: ["APPROVAL_REQUIRED"],
      secret,
    });
    expect(other.status).to.equal(403);
  });

  it("lists a department's own webhooks only; administrators see all", async function () {
    expect((await mine.get("/webhooks")).body.webhooks.map((w: { webhookId: string }) => w.webhookId)).to.deep.equal([
      webhookId,
    ]);
    expect((await theirs.get("/webhooks")).body.webhooks).to.deep.equal([]);
    const all = await fetch(`${current().api.url}/api/v1/webhooks`, { headers: { authorization: `Bearer ${admin}` } });
    expect(((await all.json()) as { webhooks: { webhookId: string }[] }).webhooks.map((w) => w.webhookId)).to.include(
      webhookId,
    );
  });

  it("sends a signed test payload that an independent check and the Standard Webhooks library both verify", async function () {
    const response = await mine.post(`/webhooks/${webhookId}/test`, {});
    expect(response.status).to.equal(200);
    expect(response.body).to.include({ success: true, statusCode: 200 });
    expect(response.body.responseTime).to.be.a("number");
    const delivery = receiver.received.at(-1)!;
    expect(delivery.headers["content-type"]).to.equal("application/json");
    // Our own check: sha256=<hex HMAC-SHA256 of the exact body>, compared in constant time.
    const expected = Buffer.from(`sha256=${createHmac("sha256", secret).update(delivery.body).digest("hex")}`);
    const given = Buffer.from(String(delivery.headers["x-webhook-signature"]));
    expect(given.length === expected.length && timingSafeEqual(given, expected)).to.equal(true);
    // A widely used receiver library (Standard Webhooks), with the secret as a raw key.
    const payload = new Webhook(secret, { format: "raw" }).verify(
      delivery.body,
      delivery.headers as Record<string, string>,
    ) as { type: string; eventId: string };
    expect(payload.type).to.equal("WEBHOOK_TEST");
    expect(delivery.headers["webhook-id"]).to.equal(payload.eventId);
    // A tampered body fails both.
    expect(() =>
      new Webhook(secret, { format: "raw" }).verify(
        delivery.body.replace("test", "TEST"),
        delivery.headers as Record<string, string>,
      ),
    ).to.throw();
  });

  it("counts only 2xx as success, does not follow redirects, and logs every attempt", async function () {
    receiver.answer(500);
    const failed = await mine.post(`/webhooks/${webhookId}/test`, {});
    expect(failed.body).to.include({ success: false, statusCode: 500 });
    receiver.answer(302);
    const redirected = await mine.post(`/webhooks/${webhookId}/test`, {});
    expect(redirected.body).to.include({ success: false, statusCode: 302 });
    expect(receiver.received.map((r) => r.path)).to.not.include("/elsewhere");
    receiver.answer(200);

    const logs = await mine.get(`/webhooks/logs?webhookId=${webhookId}`);
    expect(
      logs.body.logs.map((l: { status: string; responseStatus: number }) => [l.status, l.responseStatus]),
    ).to.deep.equal([
      ["failed", 302],
      ["failed", 500],
      ["success", 200],
    ]);
    expect(logs.body.pagination).to.deep.include({ page: 1, limit: 50, total: 3 });
    expect((await mine.get(`/webhooks/logs?status=success`)).body.logs).to.have.length(1);
    expect((await theirs.get(`/webhooks/logs?webhookId=${webhookId}`)).body.logs).to.deep.equal([]);
  });

  it("re-enables a disabled webhook (its owner or an administrator), and deletes only its own", async function () {
    await driver.core.pool.query(
      `UPDATE webhooks SET is_active = false, disabled_at = now(), disabled_reason = 'test' WHERE id = $1`,
      [webhookId],
    );
    expectError(await theirs.post(`/webhooks/${webhookId}/enable`, {}), 404);
    const enabled = await mine.post(`/webhooks/${webhookId}/enable`, {});
    expect(enabled.status).to.equal(200);
    expect(enabled.body.isActive).to.equal(true);
    expectError(await theirs.delete(`/webhooks/${webhookId}`), 404);
    expect((await mine.delete(`/webhooks/${webhookId}`)).status).to.equal(204);
    expect((await mine.get("/webhooks")).body.webhooks).to.deep.equal([]);
    const kept = await driver.core.pool.query(`SELECT count(*)::int AS n FROM webhook_logs WHERE webhook_id = $1`, [
      webhookId,
    ]);
    expect(kept.rows[0].n).to.equal(3);
    const audits = await driver.core.pool.query(
      `SELECT action FROM audit_logs WHERE entity_type = 'WEBHOOK' AND entity_id = $1 ORDER BY created_at`,
      [webhookId],
    );
    expect(audits.rows.map((r) => r.action)).to.deep.equal(["CREATE", "ENABLE", "DELETE"]);
  });

  it("refuses internal addresses in production and allows loopback in development (SSRF)", async function () {
    for (const url of [
      "http://127.0.0.1/x",
      "http://localhost/x",
      "http://10.1.2.3/x",
      "http://192.168.1.1/x",
      "http://169.254.169.254/latest/meta-data",
      "http://[::1]/x",
      "http://[fd00::1]/x",
    ]) {
      const error = await checkWebhookUrl(url, { production: true }).then(
        () => undefined,
        (e) => e,
      );
      expect(error?.code, url).to.equal("INVALID_WEBHOOK_URL");
    }
    expect((await checkWebhookUrl("https://93.184.216.34/hook", { production: true })).hostname).to.equal(
      "93.184.216.34",
    );
    expect((await checkWebhookUrl("http://127.0.0.1:9/hook", { production: false })).port).to.equal("9");
    const internal = await checkWebhookUrl("http://10.1.2.3/x", { production: false }).then(
      () => undefined,
      (e) => e,
    );
    expect(internal?.code).to.equal("INVALID_WEBHOOK_URL");
  });
});
