/**
 * The review console's reads, as a department API key calls them: GET /console/queue (open requests with their
 * stage deadlines, overdue first, filters, counts per status, paging) and GET /console/decisions (past decisions,
 * searchable); and the console's page and libraries served from this server with their Content-Security-Policy.
 */
import { expect } from "chai";
import { applicantToken, clientToken } from "./support/authClient.ts";
import { createDepartment, departmentClient } from "./support/departmentClient.ts";
import { eventually } from "./support/eventually.ts";
import { apiClient as http, type Json, expectError } from "./support/httpClient.ts";
import { createDriver, type Driver } from "./support/platformDriver.ts";
import { seedWorkflow } from "./support/seedWorkflow.ts";
import { current } from "./support/stackFixture.ts";
import { letters } from "./support/sessions.ts";

describe("console reads: GET /console/queue and GET /console/decisions", function () {
  const run = `${Date.now() % 1e7}`;
  const tag = letters(run);
  const code = `QUEUE_${tag}`;
  const otherCode = `QUEUE_OTHER_${tag}`;
  let api: string;
  let driver: Driver;
  let desk: ReturnType<typeof departmentClient>;
  let other: ReturnType<typeof departmentClient>;
  let applicant: ReturnType<typeof http>;
  let walletOfDesk: string;
  /** The requests by their part in the test: overdue (timed out), fresh (due in 30 days), and three in a joint review. */
  const ids: Record<string, string> = {};
  const numbers: Record<string, string> = {};
  const decisionTx: Record<string, string> = {};

  const stage = (name: string, departments: string[], extra: Json = {}) => ({
    stageId: name.toLowerCase().replace(/\W+/g, "-"),
    stageName: name,
    stageOrder: 1,
    executionType: "SEQUENTIAL" as const,
    completionCriteria: "ALL" as const,
    requiredApprovals: departments.map((departmentCode) => ({
      departmentCode,
      requiredDocuments: [],
      isMandatory: true,
    })),
    ...extra,
  });
  const queue = async (query = "") => {
    const answer = await desk.get(`/console/queue${query}`);
    expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
    return answer.body;
  };
  const create = async (label: string, requestType: string) => {
    const created = await applicant.post("/requests", { applicantId: `queue-${run}`, requestType });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    ids[label] = created.body.requestId;
    numbers[label] = created.body.requestNumber;
  };

  before(async function () {
    const stack = current();
    api = stack.api.url;
    driver = await createDriver(stack);
    const adminToken = await clientToken(api, stack.admin.clientId, stack.admin.clientSecret, "admin");
    const created = await createDepartment(api, adminToken, { code, name: "Queue Desk" });
    walletOfDesk = created.walletAddress;
    desk = departmentClient(api, created);
    other = departmentClient(api, await createDepartment(api, adminToken, { code: otherCode, name: "Queue Other" }));
    applicant = http(api, await applicantToken(api, { id: `queue-${run}`, name: "Quinn Queue" }));

    // Each request pins the workflow version active when it is created.
    await seedWorkflow(stack, driver, {
      workflowType: "BUILDING_PERMIT",
      name: `Building permit, timed (queue ${run})`,
      stages: [stage("Timed check", [code], { timeoutDays: 0.00003, onTimeout: "NOTIFY" })],
    });
    await create("overdue", "BUILDING_PERMIT");
    await seedWorkflow(stack, driver, {
      workflowType: "BUILDING_PERMIT",
      name: `Building permit, a month (queue ${run})`,
      stages: [stage("Month check", [code], { timeoutDays: 30, onTimeout: "ESCALATE" })],
    });
    await create("fresh", "BUILDING_PERMIT");
    await seedWorkflow(stack, driver, {
      workflowType: "BUILDING_PERMIT",
      name: `Building permit (queue ${run})`,
      stages: [stage("Joint review", [code, otherCode])],
    });
    for (const label of ["joint", "approved", "changes"]) await create(label, "BUILDING_PERMIT");
    for (const label of ["overdue", "fresh", "joint", "approved", "changes"]) {
      // The joint review's stages start at least a second after the first two (the chain's clock counts seconds).
      if (label === "joint") await new Promise((r) => setTimeout(r, 1_500));
      const submitted = await applicant.post(`/requests/${ids[label]}/submit`);
      expect(submitted.status, JSON.stringify(submitted.body)).to.equal(200);
    }
    const approved = await desk.post(`/requests/${ids.approved}/approve`, {
      remarks: `Approved after the site visit ${run}`,
      reviewedDocuments: [],
    });
    expect(approved.status, JSON.stringify(approved.body)).to.equal(200);
    decisionTx.approved = approved.body.transactionHash;
    const changes = await desk.post(`/requests/${ids.changes}/request-changes`, {
      remarks: `The fire escape plan is missing ${run}`,
      requiredDocuments: ["FIRE_PLAN"],
    });
    expect(changes.status, JSON.stringify(changes.body)).to.equal(200);
    decisionTx.changes = changes.body.transactionHash;
  });
  after(async () => {
    await driver?.close();
  });

  describe("GET /console/queue", function () {
    it("puts the overdue request first, with its stage, start, due time and timeout action", async function () {
      const body = await eventually(
        "the timed-out stage overdue and every decision indexed",
        async () => {
          const answer = await queue();
          return answer.counts.overdue === 1 && answer.counts.AWAITING_RESUBMISSION === 1 ? answer : undefined;
        },
        60_000,
      );
      const items = body.items as Json[];
      expect(items.map((i) => i.requestId)).to.have.members(Object.values(ids));
      expect(items[0].requestId).to.equal(ids.overdue);
      const overdue = items[0];
      expect(overdue).to.deep.include({
        requestNumber: numbers.overdue,
        requestType: "BUILDING_PERMIT",
        applicantName: "Quinn Queue",
        requestStatus: "SUBMITTED",
        status: "AWAITING_DECISION",
        overdue: true,
      });
      expect(overdue.stage).to.deep.include({
        index: 0,
        number: 1,
        name: "Timed check",
        mode: "SEQUENTIAL",
        timeoutDays: 3 / 86_400, // 0.00003 days, whole seconds on chain
        onTimeout: "NOTIFY",
      });
      expect(Date.parse(overdue.stage.dueAt) - Date.parse(overdue.stage.startedAt)).to.equal(3_000);
      expect(Date.parse(overdue.stage.dueAt)).to.be.below(Date.now());

      const fresh = items.find((i) => i.requestId === ids.fresh)!;
      expect(fresh.overdue).to.equal(false);
      expect(fresh.stage).to.deep.include({ name: "Month check", timeoutDays: 30, onTimeout: "ESCALATE" });
      expect(Date.parse(fresh.stage.dueAt) - Date.parse(fresh.stage.startedAt)).to.equal(30 * 86_400_000);
      const joint = items.find((i) => i.requestId === ids.joint)!;
      expect(joint.stage).to.deep.include({ name: "Joint review", timeoutDays: null, dueAt: null, onTimeout: null });
      // After the overdue one: what awaits the department, nearest deadline first; then what awaits others.
      expect(items.slice(0, 3).map((i) => i.requestId)).to.deep.equal([ids.overdue, ids.fresh, ids.joint]);
    });

    it("counts per status: awaiting the department (the contract's turn), others, the applicant", async function () {
      const body = await queue();
      expect(body.counts).to.deep.equal({
        AWAITING_DECISION: 3,
        AWAITING_OTHERS: 1,
        AWAITING_RESUBMISSION: 1,
        ESCALATED: 0,
        overdue: 1,
      });
      expect(body.pagination).to.deep.equal({ page: 1, limit: 20, total: 5, totalPages: 1 });
      const byId = Object.fromEntries((body.items as Json[]).map((i) => [i.requestId, i.status]));
      expect(byId[ids.approved]).to.equal("AWAITING_OTHERS");
      expect(byId[ids.changes]).to.equal("AWAITING_RESUBMISSION");
      // The other department of the sequential stage sees the same requests from its side.
      const theirs = (await other.get("/console/queue?requestType=BUILDING_PERMIT")).body;
      const theirById = Object.fromEntries((theirs.items as Json[]).map((i) => [i.requestId, i.status]));
      expect(theirById).to.deep.equal({
        [ids.joint]: "AWAITING_OTHERS",
        [ids.approved]: "AWAITING_DECISION",
        [ids.changes]: "AWAITING_RESUBMISSION",
      });
    });

    it("filters by request type, status and age; counts follow the other filters", async function () {
      const building = await queue("?requestType=BUILDING_PERMIT");
      expect(building.pagination.total).to.equal(5);
      const trade = await queue("?requestType=TRADE_LICENSE");
      expect(trade.items).to.deep.equal([]);
      expect(trade.counts).to.deep.equal({
        AWAITING_DECISION: 0,
        AWAITING_OTHERS: 0,
        AWAITING_RESUBMISSION: 0,
        ESCALATED: 0,
        overdue: 0,
      });

      const others = await queue("?status=AWAITING_OTHERS");
      expect((others.items as Json[]).map((i) => i.requestId)).to.deep.equal([ids.approved]);
      expect(others.pagination.total).to.equal(1);
      expect(others.counts.AWAITING_DECISION).to.equal(3); // the tabs' counts stay whole
      expect(others.counts.overdue).to.equal(0); // of the status shown
      const resubmission = await queue("?status=AWAITING_RESUBMISSION");
      expect((resubmission.items as Json[]).map((i) => i.requestId)).to.deep.equal([ids.changes]);

      // Age: the two first requests' stages started at least a second before the others' (see before()).
      const all = (await queue()).items as Json[];
      const startOf = (id: string) => Date.parse(all.find((i) => i.requestId === id)!.stage.startedAt);
      const cutoff = (startOf(ids.fresh) + startOf(ids.joint)) / 2;
      const days = (Date.now() - cutoff) / 86_400_000;
      const aged = await queue(`?olderThanDays=${days}`);
      expect((aged.items as Json[]).map((i) => i.requestId)).to.deep.equal([ids.overdue, ids.fresh]);
      expect(aged.counts).to.deep.include({ AWAITING_DECISION: 2, AWAITING_OTHERS: 0, overdue: 1 });
      expect((await queue("?olderThanDays=1")).items).to.deep.equal([]);
      expect((await queue("?olderThanDays=0")).pagination.total).to.equal(5);
    });

    it("sorts by the stage's start and pages", async function () {
      const newest = (await queue("?sort=newest")).items as Json[];
      const starts = newest.map((i) => Date.parse(i.stage.startedAt));
      expect(starts).to.deep.equal([...starts].sort((a, b) => b - a));
      const oldest = (await queue("?sort=oldest")).items as Json[];
      expect(oldest.map((i) => Date.parse(i.stage.startedAt))).to.deep.equal([...starts].sort((a, b) => a - b));

      const first = await queue("?limit=2");
      const second = await queue("?limit=2&page=2");
      const third = await queue("?limit=2&page=3");
      expect(first.pagination).to.deep.equal({ page: 1, limit: 2, total: 5, totalPages: 3 });
      const paged = [...first.items, ...second.items, ...third.items].map((i: Json) => i.requestId);
      expect(paged).to.deep.equal(((await queue()).items as Json[]).map((i) => i.requestId));
    });

    it("refuses a bad filter (400) and callers that are not a department (401, 403)", async function () {
      for (const query of ["?status=DONE", "?olderThanDays=-1", "?requestType=CAR", "?sort=random", "?limit=500"]) {
        const answer = await desk.get(`/console/queue${query}`);
        expect(answer.status, query).to.equal(400);
        expect(answer.body.code).to.equal("VALIDATION_ERROR");
      }
      expectError(await http(api).get("/console/queue"), 401);
      expectError(await applicant.get("/console/queue"), 403);
      expectError(await applicant.get("/console/decisions"), 403);
    });
  });

  describe("GET /console/decisions", function () {
    it("lists the department's decisions newest first, with remarks, signer, custody, transaction and block", async function () {
      const { decisions, pagination } = (await desk.get("/console/decisions")).body;
      expect(pagination.total).to.equal(2);
      expect((decisions as Json[]).map((d) => d.requestId)).to.deep.equal([ids.changes, ids.approved]);
      const approval = (decisions as Json[])[1];
      expect(approval).to.deep.include({
        requestNumber: numbers.approved,
        requestType: "BUILDING_PERMIT",
        applicantName: "Quinn Queue",
        stage: 1,
        decision: "APPROVED",
        status: "APPROVED",
        isActive: true,
        reason: null,
        remarks: `Approved after the site visit ${run}`,
        custody: "CUSTODIAL",
        custodyLabel: "Signed by the platform's custodial key for the department",
        transactionHash: decisionTx.approved,
      });
      expect(approval.signer.toLowerCase()).to.equal(walletOfDesk.toLowerCase());
      expect(approval.reviewers).to.deep.equal([]);
      expect(approval.blockNumber).to.be.above(0);
      const receipt = await driver.core.pool.query(`SELECT block_number FROM chain_transactions WHERE tx_hash = $1`, [
        decisionTx.approved,
      ]);
      expect(approval.blockNumber).to.equal(Number(receipt.rows[0].block_number));
      expect(approval.verifyUrl).to.match(/\/verify\?token=\d+$/);
      expect((decisions as Json[])[0]).to.deep.include({ decision: "CHANGES_REQUESTED" });
      // The other department decided nothing.
      expect((await other.get("/console/decisions")).body.decisions).to.deep.equal([]);
    });

    it("searches every word in request number, remarks, decision and transaction hash; wildcards are plain text", async function () {
      const search = async (q: string) =>
        ((await desk.get(`/console/decisions?q=${encodeURIComponent(q)}`)).body.decisions as Json[]).map(
          (d) => d.requestId,
        );
      expect(await search("SITE visit")).to.deep.equal([ids.approved]);
      expect(await search(`fire ${run}`)).to.deep.equal([ids.changes]);
      expect(await search(numbers.changes)).to.deep.equal([ids.changes]);
      expect(await search(decisionTx.approved.slice(0, 20))).to.deep.equal([ids.approved]);
      expect(await search("changes_requested")).to.deep.equal([ids.changes]);
      expect(await search("site missing")).to.deep.equal([]);
      expect(await search("100%")).to.deep.equal([]);
      const paged = (await desk.get("/console/decisions?limit=1&page=2")).body;
      expect(paged.pagination).to.deep.equal({ page: 2, limit: 1, total: 2, totalPages: 2 });
      expect((paged.decisions as Json[]).map((d) => d.requestId)).to.deep.equal([ids.approved]);
    });
  });

  describe("the console's page and libraries (GET /console, /console/vendor/*)", function () {
    it("serves the page and its modules with a strict Content-Security-Policy, and the libraries from npm", async function () {
      const page = await fetch(`${api}/console/`);
      expect(page.status).to.equal(200);
      expect(page.headers.get("content-type")).to.match(/^text\/html/);
      const csp = page.headers.get("content-security-policy")!;
      expect(csp).to.include("default-src 'none'").and.include("script-src 'self'").and.include("connect-src 'self'");
      const html = await page.text();
      expect(html).to.include('src="/console/app.js"').and.include('src="/console/vendor/simplewebauthn-browser.js"');
      for (const asset of ["app.js", "api.js", "views.js", "documents.js", "app.css"]) {
        const answer = await fetch(`${api}/console/${asset}`);
        expect(answer.status, asset).to.equal(200);
      }
      const webauthn = await fetch(`${api}/console/vendor/simplewebauthn-browser.js`);
      expect(webauthn.headers.get("content-type")).to.match(/^text\/javascript/);
      expect(await webauthn.text())
        .to.include("SimpleWebAuthnBrowser")
        .and.include("startAuthentication");
      for (const file of ["ethers.min.js", "pdf.min.mjs", "pdf.worker.min.mjs"]) {
        const answer = await fetch(`${api}/console/vendor/${file}`);
        expect(answer.status, file).to.equal(200);
        expect((await answer.arrayBuffer()).byteLength, file).to.be.above(100_000);
      }
      expect((await fetch(`${api}/console/vendor/other.js`)).status).to.equal(404);
    });
  });
});
