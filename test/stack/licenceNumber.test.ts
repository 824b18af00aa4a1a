/**
 * Details a person notices: /verify takes the licence number as printed (RL-2026-000001) as well as the token id,
 * in the API and on the page; stages are numbered from 1 for people; a real request's timeline is in chain order (the
 * ordering rules themselves: test/unit/timeline.test.ts).
 */
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { expect } from "chai";
import { chromium, type Browser, type Page } from "playwright-core";
import { ensureChromium } from "../../scripts/ensureChromium.ts";
import { createDriver, type Driver } from "./support/platformDriver.ts";
import { pdf } from "./support/sampleFiles.ts";
import { seedWorkflow } from "./support/seedWorkflow.ts";
import { adminSession, applicantClient, departmentSession, letters, type Applicant } from "./support/sessions.ts";
import { current } from "./support/stackFixture.ts";
import { submittedRequest } from "./support/submittedRequest.ts";
import { stage, workflow } from "./support/workflowDefinition.ts";

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

describe("verification by licence number (API and page) and a real request's timeline", function () {
  const run = `${Date.now() % 1e7}`;
  const tag = letters(run);
  const code = `NUMBER_${tag}`;
  let api: string;
  let driver: Driver;
  let licence: { id: string; tokenId: number; requestNumber: string };
  let applicant: Applicant;
  let browser: Browser | undefined;

  before(async function () {
    const stack = current();
    driver = await createDriver(stack);
    let adminToken: string;
    ({ api, adminToken } = await adminSession(stack));
    const department = (await departmentSession(api, adminToken, { code, name: "Numbers Office" })).client;
    await seedWorkflow(
      stack,
      driver,
      workflow(
        "BUILDING_PERMIT",
        "Building permit (licence number test)",
        stage("check", "Check", "SEQUENTIAL", { [code]: ["SITE_PLAN"] }),
      ),
    );
    applicant = await applicantClient(api, { id: `number-${run}`, name: "Nina Number" });
    const { id, tokenId, requestNumber, docs } = await submittedRequest(applicant, "BUILDING_PERMIT", {
      SITE_PLAN: pdf(`number ${run}`),
    });
    const approved = await department.post(`/requests/${id}/approve`, {
      remarks: "ok",
      reviewedDocuments: [docs.SITE_PLAN],
    });
    expect(approved.status).to.equal(200);
    licence = { id, tokenId, requestNumber };
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
