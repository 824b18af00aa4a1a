/**
 * What one department's webhooks may cost the platform, on the real stack: at most 10 per department, each URL once,
 * at most 2 deliveries in flight per host (measured at a real receiver that holds its answers), a small budget of
 * test deliveries, and no whsec_ secret that keys signatures with (next to) nothing.
 */
import { randomBytes } from "node:crypto";
import { expect } from "chai";
import { Webhook } from "standardwebhooks";
import { MAX_DELIVERIES_PER_HOST } from "../../api/src/webhooks/deliver.ts";
import { createDepartment, departmentClient, type CreatedTestDepartment } from "./support/departmentClient.ts";
import { eventually } from "./support/eventually.ts";
import { apiClient, type Json, expectError } from "./support/httpClient.ts";
import { createDriver, type Driver } from "./support/platformDriver.ts";
import { pdf } from "./support/sampleFiles.ts";
import { seedWorkflow } from "./support/seedWorkflow.ts";
import { adminSession, applicantClient, letters } from "./support/sessions.ts";
import { current } from "./support/stackFixture.ts";
import { submittedRequest } from "./support/submittedRequest.ts";
import { stage, workflow } from "./support/workflowDefinition.ts";
import { startReceiver, type Receiver } from "./support/webhookReceiver.ts";

describe("webhook limits: per department, per URL, per host in flight, test deliveries, whsec_ secrets (real stack)", function () {
  const run = String(Date.now() % 1e8);
  const tag = letters(run);
  const secret = `a-long-shared-secret-${run}`;
  let api: string;
  let driver: Driver;
  let adminToken: string;
  let receiver: Receiver;
  const departments: CreatedTestDepartment[] = [];
  const newDepartment = async (name: string) => {
    const created = await createDepartment(api, adminToken, { code: `${name}_${tag}`, name });
    departments.push(created);
    return departmentClient(api, created);
  };
  const register = (as: ReturnType<typeof departmentClient>, url: string, body: Record<string, unknown> = {}) =>
    as.post("/webhooks", { url, events: ["APPROVAL_REQUIRED"], secret, ...body });

  before(async function () {
    driver = await createDriver(current());
    ({ api, adminToken } = await adminSession());
    receiver = await startReceiver();
  });
  after(async () => {
    // Later test files must not keep delivering to receivers that are gone.
    for (const department of departments) {
      const as = departmentClient(api, department);
      for (const hook of ((await as.get("/webhooks")).body.webhooks ?? []) as Json[])
        await as.delete(`/webhooks/${hook.webhookId}`);
    }
    await receiver?.stop();
    await driver?.close();
  });

  it("accepts exactly 10 of 25 registrations sent at once; the rest are 409 WEBHOOK_LIMIT_REACHED with the limit", async function () {
    const many = await newDepartment("MANY");
    const answers = await Promise.all(
      Array.from({ length: 25 }, (_, i) => register(many, `${receiver.base}/many/${i}`)),
    );
    expect(answers.filter((a) => a.status === 201)).to.have.length(10);
    const refused = answers.filter((a) => a.status !== 201);
    expect(refused).to.have.length(15);
    for (const answer of refused) {
      expect(answer.status).to.equal(409);
      expect(answer.body).to.deep.include({ code: "WEBHOOK_LIMIT_REACHED" });
      expect(answer.body.details).to.deep.include({ limit: 10, departmentCode: `MANY_${tag}` });
      expect(answer.body.message)
        .to.be.a("string")
        .and.match(/at most 10/);
    }
    const listed = (await many.get("/webhooks")).body.webhooks as Json[];
    expect(listed).to.have.length(10);

    // Deleting one frees a place; an administrator registering for the department counts against the same limit.
    expect((await many.delete(`/webhooks/${listed[0].webhookId}`)).status).to.equal(204);
    const admin = apiClient(api, adminToken);
    const byAdmin = await admin.post("/webhooks", {
      departmentCode: `MANY_${tag}`,
      url: `${receiver.base}/many/by-admin`,
      events: ["APPROVAL_REQUIRED"],
      secret,
    });
    expect(byAdmin.status).to.equal(201);
    expectError(await register(many, `${receiver.base}/many/one-more`), 409);

    // The OpenAPI document serves the limit's answer.
    const document = (await (await fetch(`${api}/api/v1/openapi.json`)).json()) as Json;
    const [, createWebhook] = Object.entries(document.paths as Record<string, Json>).find(([path]) =>
      path.endsWith("/webhooks"),
    )!;
    expect(createWebhook.post.responses["409"].description).to.include("WEBHOOK_LIMIT_REACHED");
    expect(createWebhook.post.responses["409"].description).to.include("DUPLICATE_WEBHOOK_URL");
  });

  it("refuses a URL the department already has, however it is spelled (409 DUPLICATE_WEBHOOK_URL); other departments may use it", async function () {
    const dup = await newDepartment("DUP");
    const other = await newDepartment("DUPOTHER");
    const url = `${receiver.base}/dup`;
    const first = await register(dup, url);
    expect(first.status).to.equal(201);
    for (const spelling of [url, `${url}#again`, url.replace("http://", "HTTP://"), `${url}/../dup`]) {
      const again = await register(dup, spelling, { events: ["application.submitted"] });
      expect(again.status, spelling).to.equal(409);
      expect(again.body.code, spelling).to.equal("DUPLICATE_WEBHOOK_URL");
      expect(again.body.details, spelling).to.deep.include({ field: "url", webhookId: first.body.webhookId });
    }
    // Another path, query or department is another target.
    expect((await register(dup, `${url}?copy=1`)).status).to.equal(201);
    expect((await register(other, url)).status).to.equal(201);
    // Sent at once, one URL is still registered once.
    const racing = await Promise.all(Array.from({ length: 5 }, () => register(other, `${receiver.base}/racing`)));
    expect(racing.map((r) => r.status).sort()).to.deep.equal([201, 409, 409, 409, 409]);
    // Once deleted, the URL may be registered again.
    expect((await dup.delete(`/webhooks/${first.body.webhookId}`)).status).to.equal(204);
    expect((await register(dup, url)).status).to.equal(201);
  });

  it("refuses a whsec_ secret that is not base64 of 24 bytes or more (400 VALIDATION_ERROR on secret), the empty-key forgery among them", async function () {
    const keys = await newDepartment("WHSEC");
    for (const weak of [
      "whsec_!!!!!!!!!!!!!!!!", // decodes to nothing: an empty HMAC key anyone can sign with
      `whsec_${Buffer.alloc(16, 1).toString("base64")}`, // 16 bytes
      `whsec_${Buffer.alloc(32, 1).toString("base64url")}_`, // base64url
    ]) {
      const refused = await register(keys, `${receiver.base}/whsec`, { secret: weak });
      expect(refused.status, weak).to.equal(400);
      expect(refused.body.code, weak).to.equal("VALIDATION_ERROR");
      expect(
        refused.body.details.issues.map((i: Json) => i.path),
        weak,
      ).to.deep.equal(["secret"]);
    }
    expect((await keys.get("/webhooks")).body.webhooks).to.deep.equal([]);

    // A strong one is accepted, and the Standard Webhooks library verifies its deliveries with it.
    const strong = `whsec_${randomBytes(32).toString("base64")}`;
    const registered = await register(keys, `${receiver.base}/whsec`, { secret: strong });
    expect(registered.status, JSON.stringify(registered.body)).to.equal(201);
    expect((await keys.post(`/webhooks/${registered.body.webhookId}/test`, {})).body.success).to.equal(true);
    const delivery = receiver.at("/whsec").at(-1)!;
    expect(new Webhook(strong).verify(delivery.body, delivery.headers as Record<string, string>)).to.deep.include({
      type: "WEBHOOK_TEST",
    });
  });

  it("sends at most 10 test deliveries a minute per department: the rest are 429 RATE_LIMITED with Retry-After, and not sent", async function () {
    const tester = await newDepartment("TESTER");
    const other = await newDepartment("TESTOTHER");
    const hooks = await Promise.all([0, 1].map((i) => register(tester, `${receiver.base}/tests/${i}`)));
    const before = receiver.at("/tests/0").length + receiver.at("/tests/1").length;
    // 15 at once, over two webhooks of the department: the budget is the department's, and every process shares it.
    const answers = await Promise.all(
      Array.from({ length: 15 }, (_, i) => tester.post(`/webhooks/${hooks[i % 2].body.webhookId}/test`, {})),
    );
    expect(answers.filter((a) => a.status === 200)).to.have.length(10);
    const limited = answers.filter((a) => a.status !== 200);
    expect(limited).to.have.length(5);
    for (const answer of limited) {
      expectError(answer, 429, "RATE_LIMITED");
      expect(answer.body.details).to.deep.include({ limitPerMinute: 10 });
      expect(Number(answer.headers.get("retry-after"))).to.be.within(1, 60);
    }
    expect(receiver.at("/tests/0").length + receiver.at("/tests/1").length - before).to.equal(10);
    // Another department's budget is its own.
    const theirs = await register(other, `${receiver.base}/tests/other`);
    expect((await other.post(`/webhooks/${theirs.body.webhookId}/test`, {})).status).to.equal(200);
  });

  it("delivers one submission's events to 10 webhooks on one host at most 2 at a time, while another host's delivery goes at once", async function () {
    this.timeout(120_000);
    const slow = await startReceiver();
    const elsewhere = await startReceiver({}, "127.0.0.2");
    try {
      const fanCode = `FANOUT_${tag}`;
      const sideCode = `FANSIDE_${tag}`;
      const fan = await newDepartment("FANOUT");
      const side = await newDepartment("FANSIDE");
      await seedWorkflow(
        current(),
        driver,
        workflow(
          "BUILDING_PERMIT",
          "Building permit (webhook limits test)",
          stage("review", "Review", "PARALLEL", { [fanCode]: ["SITE_PLAN"], [sideCode]: ["SITE_PLAN"] }),
        ),
      );
      for (let i = 0; i < 10; i++) expect((await register(fan, `${slow.base}/fan/${i}`)).status).to.equal(201);
      expect((await register(side, `${elsewhere.base}/side`)).status).to.equal(201);
      slow.hold(500);
      slow.resetMostAtOnce();

      const applicantId = `webhook-limits-${run}`;
      const applicant = await applicantClient(api, { id: applicantId, name: "Fay Fanout" });
      const { id: requestId } = await submittedRequest(applicant, "BUILDING_PERMIT", {
        SITE_PLAN: pdf(`fan-out plan ${run}`),
      });

      const about = (r: { json: Json }) => r.json?.requestId === requestId;
      const fanned = await eventually(
        "10 deliveries to the slow host",
        async () => {
          const got = slow.received.filter(about);
          return got.length >= 10 ? got : undefined;
        },
        90_000,
      );
      expect(new Set(fanned.map((r) => r.path)).size).to.equal(10);
      expect(slow.mostAtOnce()).to.be.at.most(2);
      expect(MAX_DELIVERIES_PER_HOST).to.equal(2);
      // The other host was not made to wait behind the slow one's queue (the job runner has 10 slots).
      const sideDelivery = await eventually("the other host's delivery", async () => elsewhere.received.find(about));
      expect(sideDelivery.at).to.be.below(Math.max(...fanned.map((r) => r.at)));
    } finally {
      await slow.stop();
      await elsewhere.stop();
    }
  });
});
