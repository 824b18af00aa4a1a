/**
 * The review console in a real browser (Debian's headless Chromium driven by playwright-core) with a virtual
 * authenticator (CDP WebAuthn: CTAP2, internal, resident keys, user verification), on the fixture's API as a
 * development stack runs it: PUBLIC_BASE_URL http://127.0.0.1:<port>, the console at http://localhost:<port> (an IP
 * address cannot be a passkey's RP ID; the API's relying party is localhost for a loopback address).
 *
 * Custodial department: invitation → passkey registration → queue → request → documents hashed in the browser and
 * verified on chain → decision by the platform's key → history; sign-out and passkey sign-in.
 * Passkey department (2 of 2, each reviewer on a device of their own): both passkeys sign the account's key proof
 * (custody moves to the account); one reviewer approves a request (1 of 2 collected), the other signs it from the
 * Signing page: the platform relays it, the chain records the account as the signer, and `npm run audit` verifies
 * both assertions for the console's origin.
 * Screenshots at 390 and 1280 px wide in test-artifacts/console/.
 */
import { execFile } from "node:child_process";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { expect } from "chai";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { ensureChromium } from "../../scripts/ensureChromium.ts";
import { REPO_ROOT } from "../../scripts/stack/stack.ts";
import { applicantToken, clientToken } from "./support/authClient.ts";
import { createDepartment, departmentClient } from "./support/departmentClient.ts";
import { eventually } from "./support/eventually.ts";
import { apiClient as http, type Json } from "./support/httpClient.ts";
import { createDriver, type Driver } from "./support/platformDriver.ts";
import { png } from "./support/sampleFiles.ts";
import { seedWorkflow } from "./support/seedWorkflow.ts";
import { current } from "./support/stackFixture.ts";
import { letters } from "./support/sessions.ts";
import { stage, workflow } from "./support/workflowDefinition.ts";

const run = promisify(execFile);
const SHOTS = path.join(REPO_ROOT, "test-artifacts", "console");
// Chromium's background traffic is refused by this closed network: keep it quiet (as the verification page test).
const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];
const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 900 };

/** A one-page PDF whose page is a blue square (drawn, no fonts), so a rendered preview can be told from a blank one. */
function drawnPdf(note: string): Buffer {
  const content = "0 0.3 0.8 rg 20 20 160 160 re f";
  const objects = [
    "<</Type/Catalog/Pages 2 0 R>>",
    "<</Type/Pages/Kids[3 0 R]/Count 1>>",
    "<</Type/Page/Parent 2 0 R/MediaBox[0 0 200 200]/Contents 4 0 R>>",
    `<</Length ${content.length}>>stream\n${content}\nendstream`,
  ];
  let body = `%PDF-1.4\n% ${note}\n`;
  const offsets = objects.map((object, i) => {
    const at = body.length;
    body += `${i + 1} 0 obj${object}endobj\n`;
    return at;
  });
  const xref = body.length;
  body += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  body += offsets.map((at) => `${String(at).padStart(10, "0")} 00000 n \n`).join("");
  body += `trailer<</Size ${objects.length + 1}/Root 1 0 R>>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(body);
}

/** A browser profile with its own virtual authenticator (so each reviewer's passkey lives on their own device). */
interface Device {
  context: BrowserContext;
  page: Page;
  /** Console messages that are errors, and CSP violations: the page must not have any. */
  problems: string[];
  credentials(): Promise<Json[]>;
}

describe("review console in headless Chromium with a virtual passkey authenticator", function () {
  const runId = `${Date.now() % 1e7}`;
  const tag = letters(runId);
  let driver: Driver;
  let base: string;
  let adminToken: string;
  let browser: Browser;
  let applicant: ReturnType<typeof http>;
  const devices: Device[] = [];

  before(async function () {
    const stack = current();
    driver = await createDriver(stack);
    base = `http://localhost:${stack.api.port}`;
    expect(stack.config.publicBaseUrl).to.equal(`http://127.0.0.1:${stack.api.port}`);
    adminToken = await clientToken(base, stack.admin.clientId, stack.admin.clientSecret, "admin");
    applicant = http(base, await applicantToken(base, { id: `console-${runId}`, name: "Connie Console" }));
    await mkdir(SHOTS, { recursive: true });
    browser = await chromium.launch({ executablePath: await ensureChromium(), headless: true, args: CHROMIUM_ARGS });
  });
  after(async () => {
    await browser?.close();
    await driver?.close();
  });

  async function newDevice(): Promise<Device> {
    const context = await browser.newContext({ viewport: PHONE, deviceScaleFactor: 1 });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on("console", (message) => {
      if (message.type() === "error") problems.push(message.text());
    });
    page.on("pageerror", (error) => problems.push(error.message));
    const cdp = await context.newCDPSession(page);
    await cdp.send("WebAuthn.enable");
    const { authenticatorId } = await cdp.send("WebAuthn.addVirtualAuthenticator", {
      options: {
        protocol: "ctap2",
        transport: "internal",
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
        automaticPresenceSimulation: true,
      },
    });
    const device: Device = {
      context,
      page,
      problems,
      credentials: async () => (await cdp.send("WebAuthn.getCredentials", { authenticatorId })).credentials as Json[],
    };
    devices.push(device);
    return device;
  }

  const shot = async (page: Page, name: string) => {
    for (const [label, size] of [
      ["390", PHONE],
      ["1280", DESKTOP],
    ] as const) {
      await page.setViewportSize(size);
      await page.waitForTimeout(150);
      await page.screenshot({ path: path.join(SHOTS, `${name}-${label}.png`), fullPage: true });
      if (label === "390")
        expect(
          await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth),
          `${name} fits 390 px`,
        ).to.equal(true);
    }
    await page.setViewportSize(PHONE);
  };

  /** A department with one stage of its own, a submitted request with a PDF and a PNG: ids for the test. */
  async function departmentWithRequest(code: string, name: string, requestType: string) {
    const department = await createDepartment(base, adminToken, { code, name });
    await seedWorkflow(
      current(),
      driver,
      workflow(
        requestType,
        `${name} workflow (console ${runId})`,
        stage(
          "review",
          "Desk review",
          "SEQUENTIAL",
          { [code]: ["SITE_PLAN", "SITE_PHOTO"] },
          { timeoutDays: 5, onTimeout: "NOTIFY" },
        ),
      ),
    );
    const { requestId, files } = await submittedRequest(code, requestType);
    return { department, asDepartment: departmentClient(base, department), requestId, files };
  }

  /** A request of the type's active workflow with a drawn PDF and a PNG, submitted by the applicant. */
  async function submittedRequest(label: string, requestType: string) {
    const created = await applicant.post("/requests", { applicantId: `console-${runId}`, requestType });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const requestId = created.body.requestId as string;
    const files = { plan: drawnPdf(`console plan ${label}`), photo: png(`console photo ${label}`, 3, 24) };
    for (const [docType, file, filename] of [
      ["SITE_PLAN", files.plan, "plan.pdf"],
      ["SITE_PHOTO", files.photo, "photo.png"],
    ] as const) {
      const uploaded = await applicant.upload("POST", `/requests/${requestId}/documents`, file, filename, { docType });
      expect(uploaded.status, JSON.stringify(uploaded.body)).to.equal(201);
    }
    expect((await applicant.post(`/requests/${requestId}/submit`)).status).to.equal(200);
    return { requestId, files };
  }

  /** Opens the invitation link in the device's browser and registers its passkey; ends on the queue. */
  async function register(device: Device, invitationUrl: string) {
    await device.page.goto(invitationUrl);
    await device.page.waitForSelector("#register");
    await device.page.fill("#device-name", "Test laptop");
    await device.page.click("#register");
    await device.page.waitForSelector("#queue");
  }

  /** The queue has the request (waiting for the department); opens it and waits until its documents are checked. */
  async function openRequest(device: Device, requestId: string) {
    const { page } = device;
    await page.goto(`${base}/console/#/queue`);
    await page.waitForSelector(`#queue li[data-request-id="${requestId}"]`, { timeout: 30_000 });
    await page.click(`#queue li[data-request-id="${requestId}"] a`);
    await page.waitForSelector("#documents[data-checked='2']", { timeout: 30_000 });
    await page.waitForSelector(".preview[data-rendered='pdf']", { timeout: 30_000 });
  }

  describe("a custodial department", function () {
    const code = `CONSOLE_${tag}`;
    let setup: Awaited<ReturnType<typeof departmentWithRequest>>;
    let device: Device;
    /** Submitted while the queue is shown; changes are requested on it. */
    let secondRequestId: string;

    before(async function () {
      setup = await departmentWithRequest(code, "Console Works Office", "BUILDING_PERMIT");
      device = await newDevice();
    });

    it("an invitation link registers the reviewer's passkey (ES256, resident, verified) and signs them in", async function () {
      const invited = await setup.asDepartment.post(`/departments/${code}/reviewer-invitations`, {
        name: "Rita Reviewer",
      });
      expect(invited.status, JSON.stringify(invited.body)).to.equal(201);
      expect(invited.body.invitationUrl).to.match(new RegExp(`^${base}/console/#/invite/`));
      await device.page.goto(invited.body.invitationUrl);
      await device.page.waitForSelector("#register");
      await shot(device.page, "invitation");
      await device.page.fill("#device-name", "Test laptop");
      await device.page.click("#register");
      await device.page.waitForSelector("#queue");
      expect(await device.page.textContent("#who-name")).to.equal("Rita Reviewer · Console Works Office");
      const [credential] = await device.credentials();
      expect(credential).to.deep.include({ isResidentCredential: true, rpId: "localhost" });
      const reviewers = (await setup.asDepartment.get(`/departments/${code}/reviewers`)).body.reviewers as Json[];
      expect(reviewers.map((r) => [r.name, r.passkeys.length])).to.deep.equal([["Rita Reviewer", 1]]);
      // The same link does not work twice.
      await device.page.goto(invited.body.invitationUrl);
      await device.page.click("#register");
      await device.page.waitForSelector("#notice:not([hidden])");
      expect(await device.page.textContent("#notice")).to.include("INVITATION_INVALID");
    });

    it("the queue shows the request waiting for the department, with its stage and deadline, and reads it again on focus", async function () {
      await device.page.goto(`${base}/console/#/queue`);
      const row = `#queue li[data-request-id="${setup.requestId}"]`;
      await device.page.waitForSelector(row, { timeout: 30_000 });
      expect(await device.page.getAttribute(row, "data-status")).to.equal("AWAITING_DECISION");
      const text = await device.page.textContent(row);
      expect(text)
        .to.include("Stage 1: Desk review")
        .and.include("Connie Console")
        .and.match(/Due in (4|5) d/);
      expect(await device.page.textContent('.tabs button[data-status="AWAITING_DECISION"] .count')).to.equal("1");
      await shot(device.page, "queue");

      // A request submitted while the queue is shown appears when the reviewer comes back to the page.
      ({ requestId: secondRequestId } = await submittedRequest(`${code} second`, "BUILDING_PERMIT"));
      const requestId = secondRequestId;
      await eventually("the new request in the queue after focus", async () => {
        await device.page.evaluate(() => window.dispatchEvent(new Event("focus")));
        await device.page.waitForTimeout(500);
        return (await device.page.$(`#queue li[data-request-id="${requestId}"]`)) ?? undefined;
      });
      expect(await device.page.textContent('.tabs button[data-status="AWAITING_DECISION"] .count')).to.equal("2");
    });

    it("the request page hashes each document in the browser, matches the chain's anchor and shows it", async function () {
      await openRequest(device, setup.requestId);
      const checks = await device.page.$$eval("#documents .doc", (docs) =>
        docs.map((d) => ({ verified: (d as HTMLElement).dataset.verified, text: d.textContent })),
      );
      expect(checks).to.have.length(2);
      for (const check of checks) {
        expect(check.verified).to.equal("true");
        expect(check.text).to.match(/Verified: SHA-256 computed here matches the chain, block \d+/);
      }
      // pdf.js drew the page: the blue square is at the canvas's centre.
      const [red, green, blue] = await device.page.$eval("#documents .preview canvas", (canvas) => {
        const c = canvas as HTMLCanvasElement;
        return Array.from(c.getContext("2d")!.getImageData(c.width / 2, c.height / 2, 1, 1).data);
      });
      expect(red).to.be.below(30);
      expect(green).to.be.within(50, 110);
      expect(blue).to.be.above(170);
      expect(await device.page.$$("#documents .preview img")).to.have.length(1);
      await shot(device.page, "request");
    });

    it("decides with the platform's custodial key; the history lists the decision", async function () {
      const { page } = device;
      await page.fill("#remarks", `Plans and photo checked ${runId}`);
      expect(await page.textContent("#decision")).to.include("Signed by the platform's custodial key");
      await page.click("#decide");
      await page.waitForSelector("#decision-status[data-state='SUBMITTED']", { timeout: 60_000 });
      expect(await page.textContent("#decision-status")).to.match(/Approved: recorded on chain/i);
      await page.waitForSelector("#chain-signer", { timeout: 30_000 });
      expect((await page.textContent("#chain-signer"))!.toLowerCase()).to.equal(
        setup.department.walletAddress.toLowerCase(),
      );
      const [decision] = (await setup.asDepartment.get("/console/decisions")).body.decisions as Json[];
      expect(decision).to.deep.include({
        requestId: setup.requestId,
        decision: "APPROVED",
        custody: "CUSTODIAL",
        remarks: `Plans and photo checked ${runId}`,
      });
      // The audit log names the reviewer who decided in the console, not only their department.
      const audited = await driver.core.pool.query(
        `SELECT l.actor_type, l.actor_id, r.name FROM audit_logs l LEFT JOIN reviewers r ON r.id::text = l.actor_id
          WHERE l.entity_type = 'APPROVAL' AND l.tx_hash = $1`,
        [decision.transactionHash],
      );
      expect(audited.rows).to.deep.equal([
        { actor_type: "REVIEWER", actor_id: audited.rows[0]?.actor_id, name: "Rita Reviewer" },
      ]);
      await page.goto(`${base}/console/#/history`);
      await page.waitForSelector(`#history li[data-request-id="${setup.requestId}"]`, { timeout: 30_000 });
      await page.fill("#history-q", `checked ${runId}`);
      await page.click("#history-search");
      await page.waitForFunction(() => document.querySelectorAll("#history li[data-request-id]").length === 1);
      await shot(page, "history");
    });

    it("signs out, and signs in again with the passkey alone (no user name)", async function () {
      const { page } = device;
      await page.click("#sign-out");
      await page.waitForSelector("#sign-in");
      await shot(page, "sign-in");
      await page.click("#sign-in");
      await page.waitForSelector("#queue");
      expect(await page.textContent("#who-name")).to.include("Rita Reviewer");
    });

    it("requests changes; the applicant's new version and resubmission show as version 2, verified, beside the cleared decision", async function () {
      const { page } = device;
      await openRequest(device, secondRequestId);
      await page.check("input[name=decision][value=CHANGES_REQUESTED]");
      await page.fill("#remarks", `The plan needs the north elevation ${runId}`);
      await page.fill("#required-documents", "SITE_PLAN");
      await page.click("#decide");
      await page.waitForSelector("#decision-status[data-state='SUBMITTED']", { timeout: 60_000 });
      expect(await page.textContent("#decision-status")).to.include("changes requested: recorded on chain");
      // Read again once the chain's record is indexed.
      await page.waitForFunction(
        () => document.getElementById("request-status")?.textContent === "pending resubmission",
        undefined,
        { timeout: 30_000 },
      );

      const { documents } = (await applicant.get(`/requests/${secondRequestId}/documents`)).body;
      const plan = (documents as Json[]).find((d) => d.docType === "SITE_PLAN")!;
      const updated = await applicant.upload(
        "PUT",
        `/requests/${secondRequestId}/documents/${plan.documentId}`,
        drawnPdf(`console plan v2 ${runId}`),
        "plan-v2.pdf",
      );
      expect(updated.status, JSON.stringify(updated.body)).to.equal(200);
      expect((await applicant.post(`/requests/${secondRequestId}/submit`)).status).to.equal(200);

      // Back in the queue (review continues in the same stage); the new version is the one checked and shown.
      await eventually("the resubmitted request awaiting the department again", async () => {
        const queue = (await setup.asDepartment.get("/console/queue?status=AWAITING_DECISION")).body;
        return (queue.items as Json[]).some((i) => i.requestId === secondRequestId) ? queue : undefined;
      });
      await openRequest(device, secondRequestId);
      const planCard = `#documents .doc[data-document-id="${plan.documentId}"]`;
      expect(await page.getAttribute(planCard, "data-verified")).to.equal("true");
      expect(await page.textContent(planCard))
        .to.include("version 2")
        .and.include("2 versions");
      const decisions = (await page.textContent("#decisions"))!;
      expect(decisions).to.include("changes requested").and.include(`The plan needs the north elevation ${runId}`);
      expect(decisions).to.include("(resubmitted)").and.not.include("undefined");
      await shot(page, "resubmitted");
    });

    it("ran without a script error or a Content-Security-Policy violation", function () {
      // Refused calls (the used invitation's 410) are logged by the browser as failed loads: expected.
      expect(device.problems.filter((p) => !/^Failed to load resource/.test(p))).to.deep.equal([]);
    });
  });

  describe("a department whose two reviewers' passkeys hold its key (2 of 2)", function () {
    const code = `PASSKEY_${tag}`;
    let setup: Awaited<ReturnType<typeof departmentWithRequest>>;
    let pat: Device;
    let sam: Device;
    let account: string;
    let decisionTx: string;

    /** The card of the one signing request waiting on the device's Signing page, signed there. */
    async function signOnSigningPage(device: Device, id?: string) {
      const { page } = device;
      // A fresh load (a hash the page already shows would not render it again).
      await page.goto(`${base}/console/?at=${Date.now()}#/signing`);
      const card = id ? `#signing [data-signing-request-id="${id}"]` : "#signing [data-signing-request-id]";
      await page.waitForSelector(card, { timeout: 30_000 });
      const text = (await page.textContent(card))!;
      await page.click(`${card} button`);
      return { card, text };
    }
    const statusOf = (device: Device, card: string, words: string) =>
      device.page.waitForFunction(
        ([selector, expected]) => document.querySelector(`${selector} .status`)?.textContent?.includes(expected),
        [card, words] as const,
        { timeout: 60_000 },
      );

    before(async function () {
      setup = await departmentWithRequest(code, "Passkey Permits Office", "BUILDING_PERMIT");
      [pat, sam] = [await newDevice(), await newDevice()];
      for (const [device, name] of [
        [pat, "Pat Passkey"],
        [sam, "Sam Second"],
      ] as const) {
        const invited = await setup.asDepartment.post(`/departments/${code}/reviewer-invitations`, { name });
        expect(invited.status, JSON.stringify(invited.body)).to.equal(201);
        await register(device, invited.body.invitationUrl);
      }
    });

    it("both reviewers sign the passkey account's key proof in the console; the wallet change takes effect", async function () {
      const custody = await setup.asDepartment.post(`/departments/${code}/passkey-custody`, { threshold: 2 });
      expect(custody.status, JSON.stringify(custody.body)).to.equal(202);
      account = custody.body.account.address;
      const proof = custody.body.signingRequest.id as string;

      await pat.page.goto(`${base}/console/#/signing`);
      await pat.page.waitForSelector(`#signing [data-signing-request-id="${proof}"]`, { timeout: 30_000 });
      await shot(pat.page, "signing");
      const first = await signOnSigningPage(pat, proof);
      expect(first.text).to.include("Key proof").and.include(account).and.include("Collecting signatures: 0 of 2");
      // The account's signers, named, before anyone consents to it.
      expect(first.text)
        .to.include("Pat Passkey (")
        .and.include("Sam Second (")
        .and.not.include("Not a passkey")
        .and.not.include("undefined");
      await statusOf(pat, first.card, "Collecting signatures: 1 of 2");
      expect(await pat.page.textContent(first.card)).to.include("Signed by Pat Passkey");
      expect(await pat.page.isHidden(`${first.card} button`), "Pat has nothing left to sign").to.equal(true);
      const admin = http(base, adminToken);
      expect((await admin.get(`/departments/${code}`)).body.pendingWalletChange, "one of two signed").to.equal(null);

      const second = await signOnSigningPage(sam, proof);
      await statusOf(sam, second.card, "Submitted on chain");
      const proposed = (await admin.get(`/departments/${code}`)).body.pendingWalletChange;
      expect(proposed).to.include({ custody: "DEPARTMENT_HELD" });
      expect(proposed.walletAddress.toLowerCase()).to.equal(account.toLowerCase());
      await new Promise((r) => setTimeout(r, Math.max(0, Date.parse(proposed.effectiveAt) - Date.now()) + 1500));
      const activated = await admin.post(`/departments/${code}/wallet-change/activate`);
      expect(activated.status, JSON.stringify(activated.body)).to.equal(200);
      // The console reads the department's custody from the index: wait until it has the activation.
      await eventually("the index has the department's new wallet", async () => {
        const department = (await admin.get(`/departments/${code}`)).body;
        return department.custody === "DEPARTMENT_HELD" ? department : undefined;
      });
    });

    it("asks for no passkey when the typed data to sign is not the decision shown (a lying server), and signs nothing", async function () {
      const { page } = pat;
      const signCount = async () => Number((await pat.credentials())[0]!.signCount);
      const before = await signCount();
      // In the page's way, the answer shows the reviewer's remarks while the typed data carries the server's own.
      const opening = "**/api/v1/console/requests/*/signing-requests";
      await page.route(opening, async (route) => {
        const response = await route.fetch();
        const body = (await response.json()) as Json;
        body.summary = { ...body.summary, remarks: "What the reviewer typed" };
        await route.fulfill({ response, json: body });
      });
      try {
        await openRequest(pat, setup.requestId);
        await page.fill("#remarks", `Not what was shown ${runId}`);
        await page.click("#decide");
        await page.waitForFunction(
          () => document.getElementById("notice")?.textContent?.includes("is not what is shown: nothing was signed"),
          undefined,
          { timeout: 30_000 },
        );
      } finally {
        await page.unroute(opening);
      }
      expect(await signCount(), "the authenticator was not asked").to.equal(before);
      const opened = await driver.core.pool.query(
        `SELECT s.id, (SELECT count(*) FROM signing_request_assertions a WHERE a.signing_request_id = s.id)::int AS signed
           FROM signing_requests s WHERE s.request_id = $1`,
        [setup.requestId],
      );
      expect(opened.rows).to.have.length(1);
      expect(opened.rows[0].signed).to.equal(0);
      // Expired, so the Signing page lists only the decision the next test signs.
      await driver.core.pool.query(
        `UPDATE signing_requests SET expires_at = now() - interval '1 second' WHERE id = $1`,
        [opened.rows[0].id],
      );
    });

    it("one reviewer approves with their passkey (1 of 2 collected), the other signs it from the Signing page: relayed, the account is the signer", async function () {
      await openRequest(pat, setup.requestId);
      const { page } = pat;
      expect(await page.textContent("#decision")).to.include("Signed by your passkey");
      await page.fill("#remarks", `Permit plans verified ${runId}`);
      await page.click("#decide");
      await page.waitForSelector("#decision-status[data-state='COLLECTING'] .signing-state", { timeout: 60_000 });
      await page.waitForFunction(() =>
        document.getElementById("decision-status")?.textContent?.includes("Collecting signatures: 1 of 2"),
      );
      expect(await page.textContent("#decision-status"))
        .to.include("Decision: approved · “Permit plans verified")
        .and.include("Signed by Pat Passkey")
        .and.not.include("[object");
      expect(await page.isHidden("#decide"), "the form is not offered twice").to.equal(true);
      await shot(page, "collecting-1-of-2");

      const { card, text } = await signOnSigningPage(sam);
      expect(text).to.include("Decision: approved").and.include(`Permit plans verified ${runId}`);
      await statusOf(sam, card, "Submitted on chain");
      decisionTx = (await sam.page.textContent(`${card} #signing-tx`))!.replace("tx ", "").trim();
      expect(decisionTx).to.match(/^0x[0-9a-f]{64}$/);
      await sam.page.waitForSelector(`${card} #chain-signer`, { timeout: 30_000 });
      expect((await sam.page.textContent(`${card} #chain-signer`))!.toLowerCase()).to.equal(account.toLowerCase());
      expect(await sam.page.textContent(`${card} #chain-record`))
        .to.include("Pat Passkey, Sam Second")
        .and.include("Signed by the department's reviewers' passkeys");
      expect(await sam.page.isHidden(`${card} button`), "relayed: nothing left to sign").to.equal(true);
      await shot(sam.page, "submitted-2-of-2");

      // The index's DecisionRecorded: the account signed, department-held custody; the reviewers who signed.
      const [decision] = (await setup.asDepartment.get("/console/decisions")).body.decisions as Json[];
      expect(decision).to.deep.include({
        requestId: setup.requestId,
        decision: "APPROVED",
        custody: "DEPARTMENT_HELD",
        transactionHash: decisionTx,
        custodyLabel: "Signed by the department's reviewers' passkeys",
      });
      expect(decision.signer.toLowerCase()).to.equal(account.toLowerCase());
      expect(decision.reviewers.map((r: Json) => r.reviewerName)).to.deep.equal(["Pat Passkey", "Sam Second"]);
      const approved = await eventually("the request approved", async () => {
        const detail = (await applicant.get(`/requests/${setup.requestId}`)).body;
        return detail.status === "APPROVED" ? detail : undefined;
      });
      expect(approved.approvals.map((a: Json) => a.transactionHash)).to.include(decisionTx);
    });

    it("npm run audit verifies both reviewers' assertions for the console's origin", async function () {
      const stack = current();
      const tokenId = (await applicant.get(`/requests/${setup.requestId}`)).body.tokenId;
      let stdout = "";
      let exit = 0;
      try {
        ({ stdout } = await run(
          "npm",
          [
            "run",
            "--silent",
            "audit",
            "--",
            "--rpc",
            stack.rpcUrl,
            "--deployment",
            stack.config.deploymentFile!,
            "--token",
            String(tokenId),
            "--expect-origin",
            base,
            "--json",
          ],
          { cwd: REPO_ROOT, maxBuffer: 64 << 20, env: { PATH: process.env.PATH, HOME: process.env.HOME } },
        ));
      } catch (error) {
        const failed = error as { code?: number; stdout: string; stderr: string };
        exit = failed.code ?? -1;
        stdout = failed.stdout;
        if (!stdout) throw error;
      }
      const report = JSON.parse(stdout) as Json;
      const licence = (report.licences as Json[])[0];
      // Other files leave platform findings of their own on the shared chain (test/stack/audit.test.ts forces a
      // wallet change on purpose): none may name this licence, this department or its account.
      expect(licence.findings).to.deep.equal([]);
      const findings = report.findings as string[];
      expect(findings.filter((f) => f.includes(code) || f.toLowerCase().includes(account.toLowerCase()))).to.deep.equal(
        [],
      );
      expect(exit, JSON.stringify(findings)).to.equal(findings.length === 0 ? 0 : 1);
      const decision = (licence.decisions as Json[]).find((d) => d.transactionHash === decisionTx)!;
      expect(decision.signer.toLowerCase()).to.equal(account.toLowerCase());
      expect(decision.passkeys).to.have.length(2);
      for (const passkey of decision.passkeys) expect(passkey).to.include({ origin: base, verified: true });
    });

    it("ran without a script error or a Content-Security-Policy violation", function () {
      for (const device of [pat, sam])
        expect(device.problems.filter((p) => !/^Failed to load resource/.test(p))).to.deep.equal([]);
    });
  });
});
