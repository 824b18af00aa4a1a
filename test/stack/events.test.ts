/**
 * Events end to end on the real stack: a change on chain → its confirmed transaction → derived events (a job) →
 * deliveries (jobs) → a real receiver on 127.0.0.1 that verifies every signature itself and with Standard Webhooks.
 * Also the retry schedule on the accelerated job clock (JOB_TIME_SCALE in the fixture), a receiver that is down
 * then up, a crash of the API while deliveries are pending, workers in their own processes, and stage timeouts.
 */
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { getCreateIndexesSQL, getCreateTableSQL } from "@agendajs/postgres-backend";
import { expect } from "chai";
import { loadConfig } from "../../api/src/config.ts";
import { mayDeriveEvents } from "../../api/src/events/deriveEvents.ts";
import { createDocumentStore } from "../../api/src/storage/index.ts";
import { deliver } from "../../api/src/webhooks/deliver.ts";
import { RETRY_SCHEDULE_MS } from "../../api/src/webhooks/deliveryJob.ts";
import { SET_A_EVENTS, SET_B_EVENTS } from "../../api/src/webhooks/events.ts";
import { WebhookPayloadA, WebhookPayloadB } from "../../api/src/webhooks/payloads.ts";
import { applicantToken, clientToken } from "./support/authClient.ts";
import { createDepartment, departmentClient } from "./support/departmentClient.ts";
import { eventually } from "./support/eventually.ts";
import { apiClient as http, type Json } from "./support/httpClient.ts";
import { createDriver, type Driver } from "./support/platformDriver.ts";
import { pdf } from "./support/sampleFiles.ts";
import { productionEnv } from "./support/productionEnv.ts";
import { seedWorkflow } from "./support/seedWorkflow.ts";
import { current } from "./support/stackFixture.ts";
import { recordRacingTransactions } from "./support/racingTransactions.ts";
import { startReceiver, type Receiver } from "./support/webhookReceiver.ts";
import { stage, workflow } from "./support/workflowDefinition.ts";
import { letters } from "./support/sessions.ts";

const JOB_TIME_SCALE = 0.00005; // as in the stack fixture
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("events: webhooks at their triggers, retries, restarts, workers, stage timeouts (real stack)", function () {
  const run = `${Date.now() % 1e7}`;
  const tag = letters(run);
  const codes = { A: `EVA_${tag}`, B: `EVB_${tag}`, C: `EVC_${tag}`, D: `EVD_${tag}` };
  const secretOf = (name: string) => `secret-of-${name}-${run}-0123456789`;
  let driver: Driver;
  let api: string;
  let adminToken: string;
  let admin: ReturnType<typeof http>;
  let applicant: ReturnType<typeof http>;
  let receiver: Receiver;
  const departments: Record<string, Awaited<ReturnType<typeof createDepartment>>> = {};
  const as = (name: keyof typeof codes) => departmentClient(api, departments[name]);
  const applicantId = `events-${run}`;

  /** What a path received about one request (set A: requestId; set B: data.applicationId). */
  const about = (pathName: string, requestId: string) =>
    receiver
      .at(`/${pathName}`)
      .filter((r) => r.json?.requestId === requestId || r.json?.data?.applicationId === requestId);
  const typesAt = (pathName: string, requestId: string) =>
    about(pathName, requestId).map((r) => r.json.type ?? r.json.event);
  /** Waits until `pathName` received `count` deliveries named `type` about the request. */
  const waitFor = (pathName: string, requestId: string, type: string, count = 1, timeoutMs = 30_000) =>
    eventually(
      `${count} × ${type} at /${pathName}`,
      async () => {
        const found = about(pathName, requestId).filter((r) => (r.json.type ?? r.json.event) === type);
        return found.length >= count ? found : undefined;
      },
      timeoutMs,
    );

  before(async function () {
    const stack = current();
    api = stack.api.url;
    driver = await createDriver(stack);
    adminToken = await clientToken(api, stack.admin.clientId, stack.admin.clientSecret, "admin");
    admin = http(api, adminToken);
    const secrets: Record<string, string> = {};
    for (const name of ["A", "B", "C", "D", "admin", "adminA"]) secrets[`/${name}`] = secretOf(name);
    receiver = await startReceiver(secrets);
    for (const [name, code] of Object.entries(codes))
      departments[name] = await createDepartment(api, adminToken, { code, name: `${name} events department` });
    for (const name of ["A", "B", "C", "D"] as const) {
      const registered = await as(name).post("/webhooks", {
        url: `${receiver.base}/${name}`,
        events: [...SET_A_EVENTS, "certificate.revoked"],
        secret: secretOf(name),
      });
      expect(registered.status).to.equal(201);
    }
    // Administrators' webhooks without a department get every event: one on set B, one on set A's APPROVAL_REQUIRED.
    expect(
      (
        await admin.post("/webhooks", {
          url: `${receiver.base}/admin`,
          events: [...SET_B_EVENTS],
          secret: secretOf("admin"),
        })
      ).status,
    ).to.equal(201);
    expect(
      (
        await admin.post("/webhooks", {
          url: `${receiver.base}/adminA`,
          events: ["APPROVAL_REQUIRED"],
          secret: secretOf("adminA"),
        })
      ).status,
    ).to.equal(201);
    await seedWorkflow(
      stack,
      driver,
      workflow(
        "BUILDING_PERMIT",
        "Building permit (events test)",
        stage("review", "Joint review", "PARALLEL", { [codes.A]: ["SITE_PLAN"], [codes.B]: ["SITE_PLAN"] }),
        stage("final", "Final check", "SEQUENTIAL", { [codes.C]: [] }),
      ),
    );
    applicant = http(api, await applicantToken(api, { id: applicantId, name: "Eve Events" }));
  });
  after(async () => {
    // Later test files must not keep delivering to receivers that are gone.
    for (const hook of ((await admin?.get("/webhooks"))?.body.webhooks ?? []) as Json[]) {
      if (
        Object.values(codes).includes(hook.departmentCode) ||
        (hook.departmentCode === null && String(hook.url).startsWith(receiver.base))
      )
        await admin.delete(`/webhooks/${hook.webhookId}`);
    }
    await receiver?.stop();
    await driver?.close();
  });

  async function submitted(label: string) {
    const created = await applicant.post("/requests", { applicantId, requestType: "BUILDING_PERMIT" });
    expect(created.status).to.equal(201);
    const id = created.body.requestId as string;
    const uploaded = await applicant.upload(
      "POST",
      `/requests/${id}/documents`,
      pdf(`plan ${label} ${run}`),
      "plan.pdf",
      { docType: "SITE_PLAN" },
    );
    expect(uploaded.status).to.equal(201);
    expect((await applicant.post(`/requests/${id}/submit`)).status).to.equal(200);
    return { id, documentId: uploaded.body.documentId as string, requestNumber: created.body.requestNumber as string };
  }

  it("sends each event at its trigger, signed, only to the departments it concerns (and to administrators)", async function () {
    const { id, documentId, requestNumber } = await submitted("lifecycle");

    // Submission: stage 1 is pending for A and B, not C (stage 2) nor D (not in the workflow).
    const [toA] = await waitFor("A", id, "APPROVAL_REQUIRED");
    await waitFor("B", id, "APPROVAL_REQUIRED");
    expect(toA.json).to.deep.include({
      type: "APPROVAL_REQUIRED",
      requestId: id,
      requestNumber,
      requestType: "BUILDING_PERMIT",
      departmentCode: codes.A,
    });
    expect(toA.json.data).to.deep.include({ reason: "SUBMITTED", stage: { number: 1, name: "Joint review" } });
    expect(toA.json.eventId)
      .to.match(/^evt_[0-9a-f-]{36}$/)
      .and.to.equal(toA.headers["webhook-id"]);
    expect(toA.json.transactionHash).to.match(/^0x[0-9a-f]{64}$/);
    const submittedB = await waitFor("admin", id, "application.submitted", 2);
    // Set B: exactly the specification's shape.
    expect(submittedB[0].json).to.have.all.keys("event", "timestamp", "data");
    expect(submittedB[0].json.data).to.deep.equal({ applicationId: id, licenseType: "BUILDING_PERMIT", applicantId });
    expect(new Set(submittedB.map((r) => r.headers["webhook-id"])).size).to.equal(2); // one per department that must act

    // A approves: nothing new is pending (parallel stage). B approves: stage 2 starts, C must act.
    expect(
      (await as("A").post(`/requests/${id}/approve`, { remarks: "ok", reviewedDocuments: [documentId] })).status,
    ).to.equal(200);
    expect(
      (await as("B").post(`/requests/${id}/approve`, { remarks: "ok", reviewedDocuments: [documentId] })).status,
    ).to.equal(200);
    const [toC] = await waitFor("C", id, "APPROVAL_REQUIRED");
    expect(toC.json.data).to.deep.include({ reason: "STAGE_ADVANCED", stage: { number: 2, name: "Final check" } });

    // C asks for changes: every department of the workflow hears of it, D does not.
    expect(
      (
        await as("C").post(`/requests/${id}/request-changes`, {
          remarks: "Plan outdated",
          requiredDocuments: ["SITE_PLAN"],
        })
      ).status,
    ).to.equal(200);
    for (const name of ["A", "B", "C"]) await waitFor(name, id, "CHANGES_REQUESTED");
    await waitFor("admin", id, "application.returned");

    // A new version of the plan invalidates A's and B's approvals: DOCUMENT_UPDATED to them only.
    expect(
      (await applicant.upload("PUT", `/requests/${id}/documents/${documentId}`, pdf(`plan v2 ${run}`), "plan2.pdf"))
        .status,
    ).to.equal(200);
    const [updatedA] = await waitFor("A", id, "DOCUMENT_UPDATED");
    await waitFor("B", id, "DOCUMENT_UPDATED");
    expect(updatedA.json.data.invalidatedApprovals).to.have.members([codes.A, codes.B]);
    expect(updatedA.json.data.document).to.deep.include({ documentId, version: 2, documentType: "SITE_PLAN" });

    // Resubmission reopens stage 1: A and B must decide again.
    expect((await applicant.post(`/requests/${id}/submit`)).status).to.equal(200);
    const again = await waitFor("A", id, "APPROVAL_REQUIRED", 2);
    expect(again[1].json.data.reason).to.equal("RESUBMITTED");
    expect(again[1].json.eventId).to.not.equal(again[0].json.eventId);
    await as("A").post(`/requests/${id}/approve`, { remarks: "ok", reviewedDocuments: [documentId] });
    await as("B").post(`/requests/${id}/approve`, { remarks: "ok", reviewedDocuments: [documentId] });
    await waitFor("C", id, "APPROVAL_REQUIRED", 2);
    expect((await as("C").post(`/requests/${id}/approve`, { remarks: "fine", reviewedDocuments: [] })).status).to.equal(
      200,
    );
    for (const name of ["A", "B", "C"]) await waitFor(name, id, "REQUEST_APPROVED");
    await waitFor("admin", id, "application.approved");
    const [issued] = await waitFor("admin", id, "certificate.issued");
    expect(issued.json.data).to.deep.equal({ applicationId: id, licenseType: "BUILDING_PERMIT", applicantId });

    expect((await admin.post(`/requests/${id}/revoke`, { reasonCode: 4, reason: "fraud" })).status).to.equal(200);
    for (const name of ["A", "B", "C", "admin"]) await waitFor(name, id, "certificate.revoked");

    await sleep(500); // nothing else is on its way
    expect(typesAt("A", id)).to.deep.equal([
      "APPROVAL_REQUIRED",
      "CHANGES_REQUESTED",
      "DOCUMENT_UPDATED",
      "APPROVAL_REQUIRED",
      "REQUEST_APPROVED",
      "certificate.revoked",
    ]);
    expect(typesAt("C", id)).to.deep.equal([
      "APPROVAL_REQUIRED",
      "CHANGES_REQUESTED",
      "APPROVAL_REQUIRED",
      "REQUEST_APPROVED",
      "certificate.revoked",
    ]);
    expect(typesAt("D", id)).to.deep.equal([]);
    expect(typesAt("admin", id)).to.have.members([
      "application.submitted",
      "application.submitted",
      "application.submitted",
      "application.returned",
      "application.submitted",
      "application.submitted",
      "application.submitted",
      "application.approved",
      "certificate.issued",
      "certificate.revoked",
    ]);
    // Every delivery verified with the path's secret (own HMAC check and Standard Webhooks), each exactly once, and
    // shaped as the OpenAPI document's webhooks say.
    const all = ["A", "B", "C", "admin", "adminA"].flatMap((name) => about(name, id));
    for (const r of all) (r.json.event ? WebhookPayloadB : WebhookPayloadA).parse(r.json);
    const documented = (await (await fetch(`${api}/api/v1/openapi.json`)).json()) as Json;
    expect(Object.keys(documented.webhooks)).to.have.members([...SET_A_EVENTS, ...SET_B_EVENTS]);
    expect(documented.webhooks["certificate.issued"].post.requestBody.content["application/json"].schema.$ref).to.equal(
      "#/components/schemas/WebhookPayloadB",
    );
    expect(all.every((r) => r.verified)).to.equal(true);
    expect(new Set(all.map((r) => `${r.path} ${r.headers["webhook-id"]}`)).size).to.equal(all.length);
    // The log has them, as the department sees it.
    await eventually("six successful attempts in A's log", async () => {
      const logs = await as("A").get("/webhooks/logs?status=success&limit=100");
      return logs.body.logs.filter((l: Json) => (l.payload.requestId ?? l.payload.data?.applicationId) === id)
        .length === 6
        ? true
        : undefined;
    });
  });

  it("gates derive-events on the receipt: a mint and a draft document cannot yield an event, a submission can", async function () {
    const { id } = await submitted("gate");
    const { rows } = await driver.core.pool.query(
      `SELECT kind, tx_hash FROM chain_transactions WHERE request_id = $1 AND status = 'CONFIRMED'`,
      [id],
    );
    const gated: Record<string, boolean> = {};
    for (const row of rows)
      gated[row.kind] = mayDeriveEvents((await driver.core.provider.getTransactionReceipt(row.tx_hash))!.logs);
    expect(gated).to.deep.equal({ MINT_NFT: false, DOC_UPDATE: false, SUBMIT: true });
  });

  it("sends REQUEST_REJECTED to the workflow's departments when a department rejects", async function () {
    const { id } = await submitted("rejected");
    expect(
      (await as("A").post(`/requests/${id}/reject`, { remarks: "Unsafe", reason: "SAFETY_VIOLATION" })).status,
    ).to.equal(200);
    for (const name of ["A", "B", "C"]) {
      const [rejected] = await waitFor(name, id, "REQUEST_REJECTED");
      expect(rejected.json.data).to.deep.include({ status: "REJECTED" });
    }
    await waitFor("admin", id, "application.rejected");
    await sleep(300);
    expect(typesAt("D", id)).to.deep.equal([]);
  });

  for (const mode of ["answers 500", "is down (connection refused)"] as const)
    it(`when the receiver ${mode}: retries exactly at +1 min, +5 min, +30 min, +2 h, +24 h (job clock ×0.00005), then disables; held deliveries go out when re-enabled`, async function () {
      const failing = await startReceiver();
      if (mode === "answers 500") failing.answer(500);
      else await failing.down();
      try {
        const created = await admin.post("/webhooks", {
          departmentCode: codes.A,
          url: `${failing.base}/retry`,
          events: ["APPROVAL_REQUIRED"],
          secret: secretOf("retry"),
        });
        const webhookId = created.body.webhookId as string;
        const { id } = await submitted(`retries ${mode}`);
        const logs = await eventually(
          "6 failed attempts",
          async () => {
            const page = await admin.get(`/webhooks/logs?webhookId=${webhookId}&limit=50`);
            const done = page.body.logs.filter((l: Json) => l.status === "failed");
            return done.length >= 6 ? (done as Json[]).reverse() : undefined;
          },
          60_000,
        );
        expect(logs.map((l) => l.retryCount)).to.deep.equal([0, 1, 2, 3, 4, 5]);
        expect(logs.every((l) => l.payload.requestId === id)).to.equal(true);
        if (mode === "answers 500") expect(logs.every((l) => l.responseStatus === 500)).to.equal(true);
        else
          expect(logs.every((l) => l.responseStatus === null && /fetch failed|ECONNREFUSED/i.test(l.error))).to.equal(
            true,
          );
        for (let k = 0; k < 5; k++) {
          const scheduled = Date.parse(logs[k].nextRetryAt) - Date.parse(logs[k].createdAt);
          const expected = RETRY_SCHEDULE_MS[k] * JOB_TIME_SCALE;
          // Scheduled from the end of the attempt: the delay, plus the attempt's own duration and its bookkeeping
          // (the host's delivery slot, the log rows: a few ms, more on a busy two-core machine).
          expect(scheduled, `retry ${k + 1}`).to.be.within(expected - 5, expected + logs[k].responseTime + 150);
          expect(Date.parse(logs[k + 1].createdAt), `retry ${k + 1} not early`).to.be.at.least(
            Date.parse(logs[k].nextRetryAt) - 20,
          );
        }
        expect(logs[5].nextRetryAt).to.equal(null);
        const listed = (await admin.get("/webhooks")).body.webhooks.find((w: Json) => w.webhookId === webhookId);
        expect(listed.isActive).to.equal(false);
        const audits = await driver.core.pool.query(
          `SELECT action, actor_type FROM audit_logs WHERE entity_type = 'WEBHOOK' AND entity_id = $1 ORDER BY created_at`,
          [webhookId],
        );
        expect(audits.rows.map((r) => `${r.action}:${r.actor_type}`)).to.deep.equal(["CREATE:ADMIN", "DISABLE:SYSTEM"]);

        // While disabled, a new event is held, not attempted.
        const held = await submitted(`held ${mode}`);
        await eventually("the held delivery", async () => {
          const { rows } = await driver.core.pool.query(
            `SELECT d.status FROM webhook_deliveries d JOIN events e ON e.id = d.event_id WHERE d.webhook_id = $1 AND e.request_id = $2`,
            [webhookId, held.id],
          );
          return rows[0]?.status === "HELD" ? true : undefined;
        });
        if (mode !== "answers 500") await failing.up();
        const attemptsBefore = failing.received.length;
        failing.answer(200);
        expect((await as("A").post(`/webhooks/${webhookId}/enable`, {})).status).to.equal(200);
        const delivered = await eventually("the held delivery sent after re-enabling", async () =>
          failing.received.find((r) => r.json?.requestId === held.id && r.json.data.reason === "SUBMITTED"),
        );
        expect(delivered.json.departmentCode).to.equal(codes.A);
        expect(failing.received.length).to.equal(attemptsBefore + 1);
        // The delivery that exhausted its retries stays failed.
        const { rows } = await driver.core.pool.query(
          `SELECT d.status, d.attempts FROM webhook_deliveries d JOIN events e ON e.id = d.event_id WHERE d.webhook_id = $1 AND e.request_id = $2`,
          [webhookId, id],
        );
        expect(rows[0]).to.deep.equal({ status: "FAILED", attempts: 6 });
      } finally {
        await failing.stop();
      }
    });

  it("keeps retrying while a receiver is down and delivers once when it is back", async function () {
    const flaky = await startReceiver();
    try {
      const created = await admin.post("/webhooks", {
        departmentCode: codes.B,
        url: `${flaky.base}/flaky`,
        events: ["APPROVAL_REQUIRED"],
        secret: secretOf("flaky"),
      });
      const webhookId = created.body.webhookId as string;
      await flaky.down();
      const { id } = await submitted("down-up");
      await eventually("two refused attempts", async () => {
        const page = await admin.get(`/webhooks/logs?webhookId=${webhookId}&status=failed`);
        return page.body.logs.length >= 2 ? true : undefined;
      });
      await flaky.up();
      const success = await eventually("the delivery once the receiver is back", async () => {
        const page = await admin.get(`/webhooks/logs?webhookId=${webhookId}&status=success`);
        return page.body.logs[0] as Json | undefined;
      });
      expect(success.retryCount).to.be.at.least(2);
      const failed = (await admin.get(`/webhooks/logs?webhookId=${webhookId}&status=failed`)).body.logs as Json[];
      expect(failed.every((l) => l.responseStatus === null && /fetch failed|ECONNREFUSED/i.test(l.error))).to.equal(
        true,
      );
      await sleep(300);
      expect(flaky.received.filter((r) => r.json?.requestId === id)).to.have.length(1);
    } finally {
      await flaky.stop();
    }
  });

  it("loses nothing when the API is killed with deliveries pending, and duplicates only within at-least-once", async function () {
    const target = await startReceiver();
    target.answer(503);
    try {
      const created = await admin.post("/webhooks", {
        departmentCode: codes.A,
        url: `${target.base}/restart`,
        events: ["APPROVAL_REQUIRED"],
        secret: secretOf("restart"),
      });
      const webhookId = created.body.webhookId as string;
      const first = await submitted("restart-1");
      const second = await submitted("restart-2");
      await eventually("both deliveries waiting for a retry", async () => {
        const { rows } = await driver.core.pool.query(
          `SELECT count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = $1 AND status = 'PENDING' AND attempts >= 1`,
          [webhookId],
        );
        return rows[0].n === 2 ? true : undefined;
      });
      const third = await submitted("restart-3");
      // The receiver comes back the moment the API dies, not after the restart: with the job clock this fast, the
      // restarted API's first retries would otherwise exhaust the schedule against the 503s and disable the webhook.
      void current().api.process.exited.then(() => target.answer(200));
      // Killed at once: the third request's events may not even be derived yet.
      await current().restartApi("unclean");
      const ids = [first.id, second.id, third.id];
      await eventually(
        "all three delivered after the restart",
        async () => {
          const { rows } = await driver.core.pool.query(
            `SELECT d.status FROM webhook_deliveries d JOIN events e ON e.id = d.event_id WHERE d.webhook_id = $1 AND e.request_id = ANY($2)`,
            [webhookId, ids],
          );
          return rows.length === 3 && rows.every((r) => r.status === "DELIVERED") ? true : undefined;
        },
        90_000,
      );
      for (const id of ids)
        expect(
          target.received.filter((r) => r.json?.requestId === id && r.json?.type === "APPROVAL_REQUIRED"),
          id,
        ).to.have.length.at.least(1);
      // A duplicate is only possible for an attempt the crash interrupted (its log says so).
      const successes = target.received.filter((r) => ids.includes(r.json?.requestId) && r.status === 200);
      const interrupted = (
        await driver.core.pool.query(
          `SELECT count(*)::int AS n FROM webhook_logs WHERE webhook_id = $1 AND error LIKE 'interrupted%'`,
          [webhookId],
        )
      ).rows[0].n as number;
      const okIds = successes.map((r) => r.headers["webhook-id"]);
      expect(okIds.length - new Set(okIds).size).to.be.at.most(interrupted);
    } finally {
      await target.stop();
    }
  });

  it("runs jobs in worker processes (npm run worker) without the API, never twice, and the workers stop cleanly", async function () {
    await current().restartApi("clean", { JOBS_IN_API: "false" });
    const workers = [startWorker(), startWorker()];
    try {
      await Promise.all(workers.map((w) => w.ready));
      const target = await startReceiver();
      try {
        const created = await admin.post("/webhooks", {
          departmentCode: codes.B,
          url: `${target.base}/workers`,
          events: ["APPROVAL_REQUIRED", "application.submitted"],
          secret: secretOf("workers"),
        });
        const webhookId = created.body.webhookId as string;
        const requests = [];
        for (let i = 0; i < 4; i++) requests.push((await submitted(`worker-${i}`)).id);
        await eventually("8 deliveries (2 names × 4 requests)", async () =>
          target.received.length >= 8 ? true : undefined,
        );
        await sleep(500);
        const ids = target.received.map((r) => r.headers["webhook-id"]);
        expect(ids).to.have.length(8);
        expect(new Set(ids).size).to.equal(8);
        const logs = (
          await driver.core.pool.query(`SELECT count(*)::int AS n FROM webhook_logs WHERE webhook_id = $1`, [webhookId])
        ).rows[0].n;
        expect(logs).to.equal(8);
      } finally {
        await target.stop();
      }
      // SIGTERM: no new jobs, running ones finish, the process exits by itself.
      const started = Date.now();
      const codesOnExit = await Promise.all(workers.map((w) => w.stop()));
      expect(codesOnExit).to.deep.equal([0, 0]);
      // A running delivery is finished first: up to its 10 s timeout (other files' webhooks get these events too).
      expect(Date.now() - started).to.be.below(20_000);
    } finally {
      for (const w of workers) w.kill();
      await current().restartApi("clean");
    }
  });

  it("in production, refuses internal webhook URLs at registration and again at delivery (SSRF)", async function () {
    const stack = current();
    // A production API on the same database and chain: every secret given explicitly, no development conveniences.
    const production = await stack.startExtraApi(undefined, await productionEnv(stack));
    try {
      const department = departmentClient(production.url, departments.D);
      for (const url of [
        `${receiver.base}/D`,
        "http://localhost:9/x",
        "http://10.0.0.5/x",
        "http://169.254.169.254/latest/meta-data/",
        "http://[::1]:9/x",
      ]) {
        const refused = await department.post("/webhooks", {
          url,
          events: ["APPROVAL_REQUIRED"],
          secret: secretOf("ssrf"),
        });
        expect(refused.status, url).to.equal(400);
        expect(refused.body.code, url).to.equal("INVALID_WEBHOOK_URL");
      }
      // Registered while the address was acceptable (here: development), refused at delivery time in production.
      const before = receiver.at("/ssrf").length;
      const attempt = await deliver(
        driver.core.pool,
        {
          id: (await as("D").get("/webhooks")).body.webhooks[0].webhookId,
          url: `${receiver.base}/ssrf`,
          secret: secretOf("ssrf"),
        },
        { eventId: `evt_ssrf_${run}`, eventType: "APPROVAL_REQUIRED", payload: { probe: true } },
        { production: true },
      );
      expect(attempt.success).to.equal(false);
      expect(attempt.statusCode).to.equal(null);
      expect(attempt.error).to.match(/refused/);
      expect(attempt.responseTime).to.equal(null);
      expect(receiver.at("/ssrf").length).to.equal(before);
    } finally {
      await production.stop();
    }
  });

  it("deletes the stored file of a document version whose anchoring reverted on chain (discard-files job)", async function () {
    const store = await createDocumentStore(loadConfig(current().env));
    const { id: requestId } = await submitted("discard");
    const key = `requests/${requestId}/orphan-${run}.pdf`;
    const file = path.join(os.tmpdir(), `orphan-${run}.pdf`);
    await writeFile(file, pdf(`orphan ${run}`));
    await store.put(key, file, "application/pdf");
    expect(await store.exists(key)).to.equal(true);
    // Two transactions for one department recorded back to back: the second reverts when mined, as a write that raced
    // another would. The second carries a document version (as an upload's anchoring would), so its file is orphaned.
    const { core } = driver;
    await recordRacingTransactions(driver, {
      code: `DISCARD_${tag}`,
      aged: true,
      secondKind: "DOC_UPDATE",
      secondRequestId: requestId,
      withSecond: async (client, txId, hash) => {
        const documentId = randomUUID();
        await client.query(
          `INSERT INTO documents (id, request_id, doc_type, original_filename) VALUES ($1, $2, 'SITE_PLAN', 'orphan.pdf')`,
          [documentId, requestId],
        );
        await client.query(
          `INSERT INTO document_versions (document_id, version, sha256, file_size, mime_type, original_filename, storage_key, uploaded_by, chain_tx_id)
           VALUES ($1, 1, $2, 10, 'application/pdf', 'orphan.pdf', $3, 'test', $4)`,
          [documentId, hash, key, txId],
        );
      },
    });
    await core.gateway.reconcile();
    await eventually("the orphaned file deleted", async () => ((await store.exists(key)) ? undefined : true), 30_000);
    await rm(file, { force: true });
  });

  it("creates Agenda's table exactly as @agendajs/postgres-backend would (plus our job_key)", async function () {
    const client = await driver.core.pool.connect();
    const schema = `agenda_check_${run}`;
    try {
      await client.query(`CREATE SCHEMA ${schema}`);
      await client.query(`SET search_path TO ${schema}`);
      await client.query(getCreateTableSQL("agenda_jobs"));
      for (const sql of getCreateIndexesSQL("agenda_jobs")) await client.query(sql);
      const columns = async (where: string) =>
        (
          await client.query(
            `SELECT column_name, data_type, column_default, is_nullable FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'agenda_jobs' ORDER BY column_name`,
            [where],
          )
        ).rows;
      const indexes = async (where: string) =>
        (
          await client.query(
            `SELECT indexname, replace(indexdef, $1 || '.', '') AS def FROM pg_indexes WHERE schemaname = $1 AND tablename = 'agenda_jobs' ORDER BY indexname`,
            [where],
          )
        ).rows.map((r) => r.def.replace(/"/g, ""));
      const ours = (await columns(current().config.apiSchema)).filter((c) => c.column_name !== "job_key");
      expect(ours).to.deep.equal(await columns(schema));
      const theirs = await indexes(schema);
      const mine = await indexes(current().config.apiSchema);
      for (const def of theirs) expect(mine, def).to.include(def);
    } finally {
      await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await client.query("RESET search_path");
      client.release();
    }
  });

  it("in a SEQUENTIAL stage, tells each department when its turn comes, not before", async function () {
    await seedWorkflow(
      current(),
      driver,
      workflow(
        "BUILDING_PERMIT",
        "Building permit (sequential events)",
        stage("line", "In line", "SEQUENTIAL", { [codes.A]: ["SITE_PLAN"], [codes.B]: [] }),
      ),
    );
    const { id, documentId } = await submitted("sequential");
    const [first] = await waitFor("A", id, "APPROVAL_REQUIRED");
    expect(first.json.data.reason).to.equal("SUBMITTED");
    await sleep(300);
    expect(typesAt("B", id)).to.deep.equal([]);
    expect(
      (await as("A").post(`/requests/${id}/approve`, { remarks: "first", reviewedDocuments: [documentId] })).status,
    ).to.equal(200);
    const [turn] = await waitFor("B", id, "APPROVAL_REQUIRED");
    expect(turn.json.data).to.deep.include({ reason: "TURN", stage: { number: 1, name: "In line" } });
    await sleep(300);
    expect(typesAt("A", id)).to.deep.equal(["APPROVAL_REQUIRED"]);
  });

  describe("stage timeouts (timeoutDays 0.00003 ≈ 3 s on the chain's clock)", function () {
    const timeoutWorkflow = (onTimeout: "NOTIFY" | "ESCALATE" | "AUTO_REJECT") =>
      workflow(
        "BUILDING_PERMIT",
        `Building permit (${onTimeout} timeout)`,
        stage("only", "Timed review", "SEQUENTIAL", { [codes.A]: [] }, { timeoutDays: 0.00003, onTimeout }),
      );
    const requests: Record<string, string> = {};

    before(async function () {
      // Each request pins the workflow version active when it was created.
      for (const action of ["NOTIFY", "ESCALATE", "AUTO_REJECT", "CANCELLED"] as const) {
        await seedWorkflow(current(), driver, timeoutWorkflow(action === "CANCELLED" ? "AUTO_REJECT" : action));
        const created = await applicant.post("/requests", { applicantId, requestType: "BUILDING_PERMIT" });
        requests[action] = created.body.requestId;
      }
      for (const id of Object.values(requests))
        expect((await applicant.post(`/requests/${id}/submit`)).status).to.equal(200);
      // Decided before its deadline: its timeout job goes away.
      expect(
        (await as("A").post(`/requests/${requests.CANCELLED}/approve`, { remarks: "quick", reviewedDocuments: [] }))
          .status,
      ).to.equal(200);
    });

    const timelineTypes = async (id: string) =>
      ((await applicant.get(`/requests/${id}/timeline`)).body.events as Json[]).map((e) => e.eventType);

    it("NOTIFY: the pending department gets a reminder webhook and the timeline shows the overdue stage", async function () {
      const id = requests.NOTIFY;
      const reminders = await eventually(
        "the overdue reminder",
        async () => {
          const found = about("A", id).filter((r) => r.json.data?.reason === "STAGE_OVERDUE");
          return found.length ? found : undefined;
        },
        30_000,
      );
      expect(reminders[0].json).to.deep.include({ type: "APPROVAL_REQUIRED", departmentCode: codes.A });
      expect(await timelineTypes(id)).to.include("STAGE_TIMED_OUT");
      expect((await applicant.get(`/requests/${id}`)).body.status).to.equal("SUBMITTED");
      const keeper = await driver.core.pool.query(
        `SELECT status FROM chain_transactions WHERE request_id = $1 AND kind = 'TIMEOUT'`,
        [id],
      );
      expect(keeper.rows).to.deep.equal([{ status: "CONFIRMED" }]);
    });

    it("ESCALATE: recorded on chain through the keeper, on the timeline, and sent to administrators' webhooks only", async function () {
      const id = requests.ESCALATE;
      const [escalation] = await eventually(
        "the escalation at the administrators' webhook",
        async () => {
          const found = about("adminA", id).filter((r) => r.json.data?.reason === "ESCALATED");
          return found.length ? found : undefined;
        },
        30_000,
      );
      expect(escalation.json.data).to.deep.include({ cause: "TIMEOUT" });
      expect(escalation.json.departmentCode).to.equal(null);
      expect(await timelineTypes(id)).to.include("STAGE_ESCALATED");
      expect((await applicant.get(`/requests/${id}`)).body.status).to.not.equal("REJECTED");
      expect(about("A", id).filter((r) => r.json.data?.reason === "ESCALATED")).to.deep.equal([]);
    });

    it("AUTO_REJECT: the request is rejected on chain and the departments are told", async function () {
      const id = requests.AUTO_REJECT;
      await waitFor("A", id, "REQUEST_REJECTED", 1, 30_000);
      expect((await applicant.get(`/requests/${id}`)).body.status).to.equal("REJECTED");
      expect(await timelineTypes(id)).to.include.members(["STAGE_TIMED_OUT", "REQUEST_REJECTED"]);
    });

    it("a stage decided before its deadline has no timeout left to run", async function () {
      const id = requests.CANCELLED;
      const token = (await applicant.get(`/requests/${id}`)).body.tokenId;
      await sleep(4_000);
      const jobs = await driver.core.pool.query(
        `SELECT count(*)::int AS n FROM agenda_jobs WHERE name = 'stage-timeout' AND job_key = $1`,
        [`token:${token}`],
      );
      expect(jobs.rows[0].n).to.equal(0);
      expect((await applicant.get(`/requests/${id}`)).body.status).to.equal("APPROVED");
      expect(await timelineTypes(id)).to.not.include("STAGE_TIMED_OUT");
    });
  });
});

/** A worker process (`npm run worker`'s entry point) on the stack's database and chain. */
function startWorker() {
  const child = spawn(process.execPath, [path.join(process.cwd(), "api", "src", "worker.ts")], {
    env: { ...process.env, ...current().env, LOG_LEVEL: "info" },
    stdio: ["ignore", "pipe", "pipe", "ipc"],
  });
  let output = "";
  child.stdout!.on("data", (chunk) => (output += chunk));
  child.stderr!.on("data", (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const ready = new Promise<void>((resolve, reject) => {
    child.on("message", (message: { type?: string }) => message?.type === "ready" && resolve());
    void exited.then(() => reject(new Error(`worker exited during start-up:\n${output}`)));
  });
  return {
    ready,
    stop: async () => {
      child.kill("SIGTERM");
      return exited;
    },
    kill: () => {
      if (child.exitCode === null) child.kill("SIGKILL");
    },
  };
}
