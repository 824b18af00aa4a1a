/**
 * Details a person notices: /verify takes the licence number as printed (RL-2026-000001) as well as the token id,
 * in the API and on the page; stages are numbered from 1 for people; a request's timeline lists events in the order
 * they happened (chain position), its creation never shown after the mint it caused.
 */
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { expect } from "chai";
import { chromium, type Browser, type Page } from "playwright-core";
import { timelineFromRows, type TimelineRows } from "../../api/src/reads/timelineReads.ts";
import type { RequestView } from "../../api/src/reads/requestReads.ts";
import { ensureChromium } from "../../scripts/ensureChromium.ts";
import { applicantToken, clientToken } from "./support/authClient.ts";
import { createDepartment, departmentClient } from "./support/departmentClient.ts";
import { apiClient as http } from "./support/httpClient.ts";
import { createDriver, type Driver } from "./support/platformDriver.ts";
import { pdf } from "./support/sampleFiles.ts";
import { seedWorkflow } from "./support/seedWorkflow.ts";
import { current } from "./support/stackFixture.ts";

const SHOTS = path.join(process.cwd(), "test-results", "verification-page");
const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

describe("timeline order (timelineFromRows)", function () {
  const request = {
    id: "00000000-0000-4000-8000-000000000001",
    requestNumber: "RL-2026-000001",
    requestType: "RESORT_LICENSE",
    tokenId: 1n,
    applicantId: "alice",
    applicantName: "Alice",
    applicantAddress: "0x0000000000000000000000000000000000000001",
    createdBy: "applicant:alice",
    // The API's clock: 700 ms into the second in which the mint's block was sealed.
    createdAt: new Date("2026-03-01T12:00:00.700Z"),
  } as unknown as RequestView;
  const second = Date.parse("2026-03-01T12:00:00Z") / 1000;
  const rows: TimelineRows = {
    licence: [{ created_block: "5", created_tx: "0xmint", created_at: String(second) }],
    // Rows arrive in any order; the timeline orders them by block, then log index.
    statuses: [
      {
        id: "s2",
        from_status: "SUBMITTED",
        to_status: "APPROVED",
        reason_code: "0",
        block_number: "9",
        log_index: "3",
        tx_hash: "0xapprove",
        timestamp: String(second + 4),
      },
      {
        id: "s1",
        from_status: "DRAFT",
        to_status: "SUBMITTED",
        reason_code: "0",
        block_number: "7",
        log_index: "0",
        tx_hash: "0xsubmit",
        timestamp: String(second + 2),
      },
    ],
    versions: [
      {
        sha256_hash: "0xdoc",
        document_id: "d1",
        version: "1",
        block_number: "6",
        tx_hash: "0xdoc",
        timestamp: String(second + 1),
        doc_type: "SITE_PLAN",
        uploaded_by: "applicant:alice",
      },
    ],
    decisions: [
      {
        id: "a1",
        department_id: "1",
        stage: "0",
        decision: "APPROVED",
        reason_code: "0",
        block_number: "9",
        log_index: "1",
        tx_hash: "0xapprove",
        timestamp: String(second + 4),
      },
    ],
    stages: [
      {
        id: "c1",
        stage: "0",
        event_type: "StageCompleted",
        detail: {},
        block_number: "9",
        log_index: "2",
        tx_hash: "0xapprove",
        timestamp: String(second + 4),
      },
    ],
    departments: [{ department_id: "1", code: "FIRE", name: "Fire department" }],
    administrators: [{ client_id: "admin-7a400e0d2778" }],
  };

  it("lists the creation first and never stamps it after the mint it caused", function () {
    const events = timelineFromRows(request, rows);
    expect(events.map((e) => e.eventType)).to.deep.equal([
      "REQUEST_CREATED",
      "NFT_MINTED",
      "DOCUMENT_UPLOADED",
      "REQUEST_SUBMITTED",
      "APPROVAL_RECEIVED",
      "STAGE_COMPLETED",
      "REQUEST_APPROVED",
    ]);
    const times = events.map((e) => Date.parse(e.timestamp));
    for (let i = 1; i < times.length; i++)
      expect(times[i], `${events[i].eventType} after ${events[i - 1].eventType}`).to.be.at.least(times[i - 1]);
    expect(events[0].timestamp).to.equal("2026-03-01T12:00:00.000Z");
  });

  it("keeps the API's time of creation when it is before the mint's block", function () {
    const early = { ...request, createdAt: new Date("2026-03-01T11:59:59.250Z") } as RequestView;
    expect(timelineFromRows(early, rows)[0].timestamp).to.equal("2026-03-01T11:59:59.250Z");
  });

  it("shows who recorded an event by role (Administrator, System client, Applicant), never by client id", function () {
    const byAdmin = { ...request, createdBy: "client:admin-7a400e0d2778" } as RequestView;
    const versions = [{ ...rows.versions[0], uploaded_by: "client:cli_0123456789abcdef0123" }];
    const events = timelineFromRows(byAdmin, { ...rows, versions });
    const actorOf = (type: string) => events.find((e) => e.eventType === type)!.actor;
    expect(actorOf("REQUEST_CREATED")).to.deep.equal({ type: "ADMIN", id: "administrator", name: "Administrator" });
    expect(actorOf("DOCUMENT_UPLOADED")).to.deep.equal({ type: "SYSTEM", id: "system-client", name: "System client" });
    expect(actorOf("APPROVAL_RECEIVED")).to.deep.equal({ type: "DEPARTMENT", id: "FIRE", name: "Fire department" });
    expect(JSON.stringify(events)).to.not.match(/admin-7a400e0d2778|cli_0123|client:/);
    expect(timelineFromRows(request, rows)[0].actor).to.deep.equal({ type: "APPLICANT", id: "alice", name: "Alice" });
  });

  it("numbers stages from 1 in what it says and in its metadata", function () {
    // A reopening from the second stage back to the first (the index keeps the chain's indexes, from 0).
    const reopened = {
      id: "r1",
      stage: "0",
      event_type: "StageReopened",
      detail: { fromStage: "1", toStage: "0" },
      block_number: "8",
      log_index: "0",
      tx_hash: "0xreopen",
      timestamp: String(second + 3),
    };
    const events = timelineFromRows(request, { ...rows, stages: [...rows.stages, reopened] });
    const approval = events.find((e) => e.eventType === "APPROVAL_RECEIVED")!;
    expect(approval.description).to.equal("FIRE approved (stage 1)");
    expect(approval.metadata).to.deep.equal({ stage: 1, reasonCode: 0 });
    const completed = events.find((e) => e.eventType === "STAGE_COMPLETED")!;
    expect(completed.description).to.equal("Stage 1 completed");
    expect(completed.metadata).to.deep.equal({ stage: 1 });
    const back = events.find((e) => e.eventType === "STAGE_REOPENED")!;
    expect(back.description).to.equal("A document update sent the review back to stage 1");
    expect(back.metadata).to.deep.equal({ stage: 1, fromStage: 2, toStage: 1 });
  });
});

describe("verification by licence number (API and page) and a real request's timeline", function () {
  const run = `${Date.now() % 1e7}`;
  const tag = run.replace(/\d/g, (d) => "ABCDEFGHIJ"[Number(d)]);
  const code = `NUMBER_${tag}`;
  let api: string;
  let driver: Driver;
  let licence: { id: string; tokenId: number; requestNumber: string };
  let applicant: ReturnType<typeof http>;
  let browser: Browser | undefined;

  before(async function () {
    const stack = current();
    api = stack.api.url;
    driver = await createDriver(stack);
    const adminToken = await clientToken(api, stack.admin.clientId, stack.admin.clientSecret, "admin");
    const department = departmentClient(api, await createDepartment(api, adminToken, { code, name: "Numbers Office" }));
    await seedWorkflow(stack, driver, {
      workflowType: "BUILDING_PERMIT",
      name: "Building permit (licence number test)",
      stages: [
        {
          stageId: "check",
          stageName: "Check",
          stageOrder: 1,
          executionType: "SEQUENTIAL",
          completionCriteria: "ALL",
          requiredApprovals: [{ departmentCode: code, requiredDocuments: ["SITE_PLAN"], isMandatory: true }],
        },
      ],
    });
    applicant = http(api, await applicantToken(api, { id: `number-${run}`, name: "Nina Number" }));
    const created = await applicant.post("/requests", { applicantId: `number-${run}`, requestType: "BUILDING_PERMIT" });
    const uploaded = await applicant.upload(
      "POST",
      `/requests/${created.body.requestId}/documents`,
      pdf(`number ${run}`),
      "plan.pdf",
      { docType: "SITE_PLAN" },
    );
    await applicant.post(`/requests/${created.body.requestId}/submit`);
    expect(
      (
        await department.post(`/requests/${created.body.requestId}/approve`, {
          remarks: "ok",
          reviewedDocuments: [uploaded.body.documentId],
        })
      ).status,
    ).to.equal(200);
    const detail = (await applicant.get(`/requests/${created.body.requestId}`)).body;
    licence = { id: created.body.requestId, tokenId: detail.tokenId, requestNumber: detail.requestNumber };
  });
  after(async () => {
    await browser?.close();
    await driver?.close();
  });

  it("GET /verify/{licence number} answers as GET /verify/{tokenId}, in any case; an unknown number is UNKNOWN, a malformed one 400", async function () {
    expect(licence.requestNumber).to.match(/^BP-\d{4}-\d{6}$/);
    const byToken = (await (await fetch(`${api}/api/v1/verify/${licence.tokenId}`)).json()) as any;
    for (const number of [licence.requestNumber, licence.requestNumber.toLowerCase()]) {
      const response = await fetch(`${api}/api/v1/verify/${number}`);
      expect(response.status).to.equal(200);
      const body = (await response.json()) as any;
      expect({ ...body, checkedAt: null }).to.deep.equal({ ...byToken, checkedAt: null });
      expect(body).to.include({ verdict: "VALID", tokenId: licence.tokenId, requestNumber: licence.requestNumber });
    }
    const unknown = await fetch(`${api}/api/v1/verify/BP-1999-000001`);
    expect(unknown.status).to.equal(404);
    expect(((await unknown.json()) as any).details).to.deep.equal({ verdict: "UNKNOWN" });
    const malformed = await fetch(`${api}/api/v1/verify/BP-2026-1`);
    expect(malformed.status).to.equal(400);
    expect(((await malformed.json()) as any).code).to.equal("VALIDATION_ERROR");
  });

  it("the page takes the licence number as printed and shows the type and stages in plain words", async function () {
    await mkdir(SHOTS, { recursive: true });
    browser = await chromium.launch({ executablePath: await ensureChromium(), headless: true, args: CHROMIUM_ARGS });
    const page: Page = await (
      await browser.newContext({
        viewport: { width: 390, height: 844 },
        deviceScaleFactor: 2,
        isMobile: true,
        hasTouch: true,
      })
    ).newPage();
    await page.goto(`${api}/verify`);
    await page.fill("#token-input", licence.requestNumber);
    await page.click("#token-submit");
    await page.waitForFunction(() => document.getElementById("verdict")!.dataset.verdict === "VALID");
    expect(await page.textContent("#details"))
      .to.include(licence.requestNumber)
      .and.to.include("building permit");
    expect(await page.textContent("#approvals")).to.include("Numbers Office — stage 1 —");
    await page.screenshot({ path: path.join(SHOTS, "licence-number-valid.png"), fullPage: true });

    await page.fill("#token-input", "not a number");
    await page.click("#token-submit");
    await page.waitForFunction(() => document.getElementById("verdict")!.dataset.verdict === "UNKNOWN");
    expect(await page.textContent("#message")).to.include("RL-2026-000001");
  });

  it("lists the real request's events in the order they happened, with times that never go back", async function () {
    const { events } = (await applicant.get(`/requests/${licence.id}/timeline`)).body as {
      events: { eventType: string; timestamp: string }[];
    };
    expect(events.slice(0, 2).map((e) => e.eventType)).to.deep.equal(["REQUEST_CREATED", "NFT_MINTED"]);
    expect(events.map((e) => e.eventType)).to.include.members([
      "DOCUMENT_UPLOADED",
      "REQUEST_SUBMITTED",
      "APPROVAL_RECEIVED",
      "REQUEST_APPROVED",
    ]);
    const times = events.map((e) => Date.parse(e.timestamp));
    for (let i = 1; i < times.length; i++)
      expect(times[i], `${events[i].eventType} after ${events[i - 1].eventType}`).to.be.at.least(times[i - 1]);
  });
});
