import { expect } from "chai";
import { Wallet } from "ethers";
import { ChainUnavailableError } from "../../api/src/chain/chainErrors.ts";
import { toAppError } from "../../api/src/http/errorMiddleware.ts";
import { networkStatus, type RpcSend } from "../../api/src/chain/networkStatus.ts";
import { REQUEST_STATUSES, REQUEST_TYPES } from "../../api/src/routes/schemas/common.ts";
import { applicantToken, clientToken } from "./support/authClient.ts";
import { createDepartment, departmentClient } from "./support/departmentClient.ts";
import { eventually } from "./support/eventually.ts";
import { apiClient as http, type Json, expectError } from "./support/httpClient.ts";
import { b32, createDriver, type Driver } from "./support/platformDriver.ts";
import { pdf } from "./support/sampleFiles.ts";
import { seedWorkflow } from "./support/seedWorkflow.ts";
import { adminSession, letters } from "./support/sessions.ts";
import { current } from "./support/stackFixture.ts";
import { stage, workflow } from "./support/workflowDefinition.ts";
import { recordRacingTransactions } from "./support/racingTransactions.ts";

const DAY_MS = 86_400_000;
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * The administrator's reads over HTTP on the real stack: statistics that move with the requests created here,
 * every audit-log filter and its pagination, the outbox checked against the chain's receipts, the chain's status
 * against the node (and a stopped chain). The status probe's Besu paths run against a scripted RPC.
 */
describe("administration: statistics, audit logs, blockchain status and transactions (HTTP, real stack)", function () {
  const run = `${Date.now() % 1e7}`;
  const tag = letters(run);
  const code = `ADMREV_${tag}`;
  let driver: Driver;
  let api: string;
  let admin: ReturnType<typeof http>;
  /** The stats test's applicant; the audit tests sign in their own, so that filtering by actor sees only theirs. */
  let applicant: Applicant;
  let department: Awaited<ReturnType<typeof createDepartment>>;
  let adminToken: string;

  before(async function () {
    const stack = current();
    driver = await createDriver(stack);
    ({ api, adminToken, admin } = await adminSession(stack));
    department = await createDepartment(api, adminToken, { code, name: "Admin test reviewers" });
    await seedWorkflow(
      stack,
      driver,
      workflow(
        "BUILDING_PERMIT",
        "Building permit (admin test)",
        stage("review", "Review", "SEQUENTIAL", { [code]: ["SITE_PLAN"] }),
      ),
    );
    applicant = await signIn("stats");
  });
  after(async () => driver?.close());

  const asDepartment = () => departmentClient(api, department);

  interface Applicant {
    id: string;
    client: ReturnType<typeof http>;
  }
  async function signIn(label: string): Promise<Applicant> {
    const id = `admin-${label}-${run}`;
    return { id, client: http(api, await applicantToken(api, { id, name: `Ada ${label}` })) };
  }

  async function draftRequest(who: Applicant = applicant, headers: Record<string, string> = {}) {
    const created = await who.client.post(
      "/requests",
      { applicantId: who.id, requestType: "BUILDING_PERMIT" },
      headers,
    );
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    return created.body as { requestId: string; requestNumber: string; transactionHash: string };
  }

  async function submittedRequest(label: string, who: Applicant = applicant) {
    const created = await draftRequest(who);
    const uploaded = await who.client.upload(
      "POST",
      `/requests/${created.requestId}/documents`,
      pdf(`${label} ${run}`),
      "plan.pdf",
      { docType: "SITE_PLAN" },
    );
    expect(uploaded.status, JSON.stringify(uploaded.body)).to.equal(201);
    const submitted = await who.client.post(`/requests/${created.requestId}/submit`);
    expect(submitted.status, JSON.stringify(submitted.body)).to.equal(200);
    return {
      ...created,
      documentId: uploaded.body.documentId as string,
      submitHash: submitted.body.transactionHash as string,
    };
  }

  /** Seconds between two transactions' blocks, from the chain. */
  async function blockSecondsBetween(firstHash: string, secondHash: string): Promise<number> {
    const time = async (hash: string) => {
      const receipt = await driver.core.provider.getTransactionReceipt(hash);
      return (await driver.core.provider.getBlock(receipt!.blockNumber))!.timestamp;
    };
    return (await time(secondHash)) - (await time(firstHash));
  }

  /** Every item of a paginated admin list, page by page at the largest page size. */
  async function everyItem(path: string, key: "logs" | "transactions"): Promise<Json[]> {
    const items: Json[] = [];
    for (let page = 1; ; page++) {
      const response = await admin.get(`${path}${path.includes("?") ? "&" : "?"}limit=200&page=${page}`);
      expect(response.status, JSON.stringify(response.body)).to.equal(200);
      items.push(...response.body[key]);
      if (page >= response.body.pagination.totalPages) return items;
    }
  }

  const nonIncreasing = (times: string[]) =>
    times.every((t, i) => i === 0 || Date.parse(times[i - 1]) >= Date.parse(t));

  it("answers administrators only: 401 without a token, 403 for applicants, departments and tokens without the admin scope", async function () {
    const stack = current();
    const readOnly = http(
      api,
      await clientToken(api, stack.admin.clientId, stack.admin.clientSecret, "applications:read"),
    );
    for (const path of [
      "/admin/stats",
      "/admin/audit-logs",
      "/admin/blockchain/status",
      "/admin/blockchain/transactions",
    ]) {
      const anonymous = await http(api).get(path);
      expect(anonymous.status, path).to.equal(401);
      expect(anonymous.body.code).to.equal("UNAUTHORIZED");
      for (const [who, caller] of [
        ["applicant", applicant.client],
        ["department", asDepartment()],
        ["read-only client", readOnly],
      ] as const) {
        const refused = await caller.get(path);
        expect(refused.status, `${who} ${path}`).to.equal(403);
        expect(refused.body.code).to.equal("FORBIDDEN");
      }
      expect((await admin.get(path)).status, path).to.equal(200);
    }
  });

  it("counts requests, transactions and final decisions that change with the requests created here", async function () {
    const today = day(Date.now());
    const startedAt = (await driver.core.pool.query(`SELECT now() AS t`)).rows[0].t as Date;
    const before = await admin.get("/admin/stats");
    expect(before.status, JSON.stringify(before.body)).to.equal(200);
    // Default period: the 30 days ending today (UTC).
    expect(before.body.period).to.deep.equal({
      start: day(Date.parse(`${today}T00:00:00Z`) - 29 * DAY_MS),
      end: today,
    });
    expect(Object.keys(before.body.requests.byStatus)).to.include.members([...REQUEST_STATUSES]);
    expect(Object.keys(before.body.requests.byType)).to.include.members([...REQUEST_TYPES]);

    const draft = await draftRequest();
    const approved = await submittedRequest("approved");
    const approval = await asDepartment().post(`/requests/${approved.requestId}/approve`, {
      remarks: "fine",
      reviewedDocuments: [approved.documentId],
    });
    expect(approval.status, JSON.stringify(approval.body)).to.equal(200);
    expect(approval.body.workflowStatus.isComplete).to.equal(true);
    const rejected = await submittedRequest("rejected");
    const rejection = await asDepartment().post(`/requests/${rejected.requestId}/reject`, {
      remarks: "unsafe",
      reason: "SAFETY_VIOLATION",
    });
    expect(rejection.status, JSON.stringify(rejection.body)).to.equal(200);
    // An issuance may anchor its status list: the platform's own transaction, no request's. Settled first.
    const anchoring = () =>
      driver.core.pool.query(
        `SELECT (SELECT count(*) FROM agenda_jobs WHERE name = 'anchor-status-list')::int AS jobs,
                (SELECT count(*) FROM chain_transactions WHERE kind = 'STATUS_LIST_ANCHOR' AND status = 'PENDING')::int AS pending,
                (SELECT count(*) FROM chain_transactions WHERE kind = 'STATUS_LIST_ANCHOR' AND status = 'CONFIRMED' AND created_at >= $1)::int AS anchors`,
        [startedAt],
      );
    const { anchors } = await eventually("status list anchoring settled", async () => {
      const { rows } = await anchoring();
      return rows[0].jobs + rows[0].pending === 0 ? rows[0] : undefined;
    });

    const after = await admin.get("/admin/stats");
    expect(after.status).to.equal(200);
    const b = before.body;
    const a = after.body;
    expect(a.requests.total - b.requests.total).to.equal(3);
    const statusDelta = Object.fromEntries(
      REQUEST_STATUSES.map((s) => [s, a.requests.byStatus[s] - b.requests.byStatus[s]]),
    );
    expect(statusDelta).to.deep.equal({
      ...Object.fromEntries(REQUEST_STATUSES.map((s) => [s, 0])),
      DRAFT: 1,
      APPROVED: 1,
      REJECTED: 1,
    });
    expect(a.requests.byType.BUILDING_PERMIT - b.requests.byType.BUILDING_PERMIT).to.equal(3);
    expect(a.requests.byType.TRADE_LICENSE).to.equal(b.requests.byType.TRADE_LICENSE);
    expect(a.performance.requestsPerDay).to.equal(Math.round((a.requests.total / 30) * 1000) / 1000);

    // Transactions: exactly the confirmed ones these three requests caused (mints, anchors, submissions, decisions).
    const mine = await driver.core.pool.query(
      `SELECT count(*)::int AS n, count(*) FILTER (WHERE kind = 'MINT_NFT')::int AS minted FROM chain_transactions WHERE status = 'CONFIRMED' AND request_id = ANY($1)`,
      [[draft.requestId, approved.requestId, rejected.requestId]],
    );
    expect(mine.rows[0]).to.deep.equal({ n: 3 + 2 * 3, minted: 3 }); // 3 mints; per submitted one: upload, submit, decision
    expect(a.blockchain.totalTransactions - b.blockchain.totalTransactions).to.equal(mine.rows[0].n + anchors);
    expect(a.blockchain.nftsMinted - b.blockchain.nftsMinted).to.equal(3);
    expect(a.blockchain.failedTransactions).to.equal(b.blockchain.failedTransactions);

    // The whole outbox is within the default period here: the statistics agree with the list and the receipts.
    const confirmed = await everyItem("/admin/blockchain/transactions?status=CONFIRMED", "transactions");
    expect(a.blockchain.totalTransactions).to.equal(confirmed.length);
    expect(a.blockchain.nftsMinted).to.equal(confirmed.filter((t) => t.txType === "MINT_NFT").length);
    const receipts = await Promise.all(
      confirmed.map((t) => driver.core.provider.getTransactionReceipt(t.transactionHash)),
    );
    const gas = receipts.reduce((sum, r) => sum + Number(r!.gasUsed), 0) / receipts.length;
    expect(a.blockchain.avgGasUsed).to.be.closeTo(gas, 0.006);

    // Processing time: first submission to final decision, block times, averaged over the decided requests.
    expect(a.performance.decidedRequests - b.performance.decidedRequests).to.equal(2);
    const seconds =
      (await blockSecondsBetween(approved.submitHash, approval.body.transactionHash)) +
      (await blockSecondsBetween(rejected.submitHash, rejection.body.transactionHash));
    const addedDays =
      a.performance.avgProcessingTimeDays * a.performance.decidedRequests -
      b.performance.avgProcessingTimeDays * b.performance.decidedRequests;
    expect(addedDays).to.be.closeTo(
      seconds / 86_400,
      1e-6 * (a.performance.decidedRequests + b.performance.decidedRequests) + 1e-9,
    );

    // Today alone: the same requests, per day = total.
    const todayOnly = await admin.get(`/admin/stats?startDate=${today}&endDate=${today}`);
    expect(todayOnly.body.period).to.deep.equal({ start: today, end: today });
    expect(todayOnly.body.requests.total).to.be.at.least(3);
    expect(todayOnly.body.performance.requestsPerDay).to.equal(todayOnly.body.requests.total);
  });

  it("answers a period without activity with zeros for every status and type, and refuses bad periods", async function () {
    const empty = await admin.get("/admin/stats?startDate=2001-01-01&endDate=2001-01-10");
    expect(empty.status).to.equal(200);
    expect(empty.body).to.deep.equal({
      period: { start: "2001-01-01", end: "2001-01-10" },
      requests: {
        total: 0,
        byStatus: Object.fromEntries(REQUEST_STATUSES.map((s) => [s, 0])),
        byType: Object.fromEntries(REQUEST_TYPES.map((t) => [t, 0])),
      },
      blockchain: { totalTransactions: 0, nftsMinted: 0, avgGasUsed: 0, failedTransactions: 0 },
      performance: { avgProcessingTimeDays: 0, requestsPerDay: 0, decidedRequests: 0 },
    });
    // Only endDate: the 30 days ending then.
    expect((await admin.get("/admin/stats?endDate=2001-01-31")).body.period).to.deep.equal({
      start: "2001-01-02",
      end: "2001-01-31",
    });

    const reversed = await admin.get("/admin/stats?startDate=2024-02-02&endDate=2024-02-01");
    expectError(reversed, 400, "VALIDATION_ERROR");
    expect(reversed.body.details.issues[0]).to.include({ in: "query", path: "startDate" });
    // A start after the default end (today) is reversed too.
    expectError(await admin.get(`/admin/stats?startDate=${day(Date.now() + 2 * DAY_MS)}`), 400);
    for (const bad of ["startDate=2024-13-01", "endDate=yesterday", "startDate=2024-01-01T00:00:00Z"]) {
      const refused = await admin.get(`/admin/stats?${bad}`);
      expect(refused.status, bad).to.equal(400);
      expect(refused.body.code, bad).to.equal("VALIDATION_ERROR");
    }
  });

  it("filters the audit trail by entity, action, actor and time, newest first, with the HTTP request's id and the transaction", async function () {
    const stack = current();
    const requestHeader = `admin-audit-${run}`;
    const auditor = await signIn("audit");
    const applicantId = auditor.id;
    const created = await draftRequest(auditor, { "user-agent": `admin-test/${run}`, "x-request-id": requestHeader });
    const uploaded = await auditor.client.upload(
      "POST",
      `/requests/${created.requestId}/documents`,
      pdf(`audit ${run}`),
      "plan.pdf",
      { docType: "SITE_PLAN" },
    );
    expect(uploaded.status).to.equal(201);
    const submitted = await auditor.client.post(`/requests/${created.requestId}/submit`);
    expect(submitted.status).to.equal(200);

    const request = await admin.get(`/admin/audit-logs?entityType=REQUEST&entityId=${created.requestId}`);
    expect(request.status, JSON.stringify(request.body)).to.equal(200);
    expect(request.body.logs.map((l: Json) => l.action)).to.deep.equal(["SUBMIT", "CREATE"]);
    expect(request.body.pagination).to.deep.equal({ page: 1, limit: 50, total: 2, totalPages: 1 });
    const creation = request.body.logs[1];
    expect(creation).to.deep.include({
      entityType: "REQUEST",
      entityId: created.requestId,
      action: "CREATE",
      actorType: "APPLICANT",
      actorId: applicantId,
      oldValue: null,
      userAgent: `admin-test/${run}`,
      requestId: requestHeader,
      transactionHash: created.transactionHash,
    });
    expect(creation.logId).to.match(UUID);
    expect(creation.newValue).to.include({
      requestNumber: created.requestNumber,
      requestType: "BUILDING_PERMIT",
      status: "DRAFT",
    });
    expect(creation.ipAddress).to.match(/127\.0\.0\.1|::1/);
    expect(request.body.logs[0].transactionHash).to.equal(submitted.body.transactionHash);

    const document = await admin.get(`/admin/audit-logs?entityType=DOCUMENT&entityId=${uploaded.body.documentId}`);
    expect(document.body.logs.map((l: Json) => [l.action, l.actorId])).to.deep.equal([["UPLOAD", applicantId]]);

    // By actor (identity-locker ids, codes and client ids are not UUIDs), alone and with the other filters.
    const byActor = await admin.get(`/admin/audit-logs?actorId=${applicantId}`);
    // The applicant's sign-in is on record too.
    expect(byActor.body.logs.map((l: Json) => l.action)).to.deep.equal(["SUBMIT", "UPLOAD", "CREATE", "SIGN_IN"]);
    expect(byActor.body.logs.every((l: Json) => l.actorId === applicantId)).to.equal(true);
    expect(nonIncreasing(byActor.body.logs.map((l: Json) => l.createdAt))).to.equal(true);
    expect(
      (await admin.get(`/admin/audit-logs?actorId=${applicantId}&action=SUBMIT`)).body.logs.map(
        (l: Json) => l.entityId,
      ),
    ).to.deep.equal([created.requestId]);
    expect(
      (await admin.get(`/admin/audit-logs?actorId=${applicantId}&entityType=DOCUMENT`)).body.logs.map(
        (l: Json) => l.action,
      ),
    ).to.deep.equal(["UPLOAD"]);
    expect(
      (await admin.get(`/admin/audit-logs?actorId=${applicantId}&actorType=APPLICANT`)).body.pagination.total,
    ).to.equal(4); // with the sign-in
    expect(
      (await admin.get(`/admin/audit-logs?actorId=${applicantId}&actorType=ADMIN`)).body.pagination.total,
    ).to.equal(0);
    expect((await admin.get(`/admin/audit-logs?actorId=${applicantId}&action=APPROVE`)).body.logs).to.deep.equal([]);
    const actions = (await admin.get(`/admin/audit-logs?action=SUBMIT&limit=200`)).body.logs as Json[];
    expect(actions.length).to.be.at.least(1);
    expect(actions.every((l) => l.action === "SUBMIT")).to.equal(true);

    // Departments are audited under their code, administrators' changes under the client id.
    const departmentLogs = await admin.get(`/admin/audit-logs?entityType=DEPARTMENT&entityId=${code}`);
    expect(departmentLogs.body.logs).to.have.length(1);
    expect(departmentLogs.body.logs[0]).to.deep.include({
      action: "CREATE",
      actorType: "ADMIN",
      actorId: stack.admin.clientId,
    });
    expect(departmentLogs.body.logs[0].transactionHash).to.match(/^0x[0-9a-f]{64}$/);
    // Our extra entity type: a webhook registered by the administrator.
    const webhook = await admin.post(
      "/webhooks",
      { url: "http://127.0.0.1:9/admin-test-hook", events: ["REQUEST_APPROVED"], secret: "a-secret-of-sixteen+" },
      { "x-request-id": `${requestHeader}-hook` },
    );
    expect(webhook.status, JSON.stringify(webhook.body)).to.equal(201);
    expect((await admin.delete(`/webhooks/${webhook.body.webhookId}`)).status).to.equal(204);
    const hookLogs = await admin.get(`/admin/audit-logs?entityType=WEBHOOK&entityId=${webhook.body.webhookId}`);
    expect(hookLogs.body.logs.map((l: Json) => [l.action, l.actorType, l.actorId, l.transactionHash])).to.deep.equal([
      ["DELETE", "ADMIN", stack.admin.clientId, null],
      ["CREATE", "ADMIN", stack.admin.clientId, null],
    ]);
    expect(hookLogs.body.logs[1].requestId).to.equal(`${requestHeader}-hook`);

    // Time: both bounds inclusive, to the millisecond shown; offsets honoured.
    const [submitLog, uploadLog, createLog] = byActor.body.logs as Json[];
    const at = async (query: string) =>
      ((await admin.get(`/admin/audit-logs?actorId=${applicantId}&${query}`)).body.logs as Json[]).map((l) => l.action);
    const shifted = (iso: string, ms: number) => new Date(Date.parse(iso) + ms).toISOString();
    expect(await at(`startDate=${createLog.createdAt}&endDate=${createLog.createdAt}`)).to.deep.equal(["CREATE"]);
    expect(await at(`startDate=${shifted(createLog.createdAt, 1)}`)).to.deep.equal(["SUBMIT", "UPLOAD"]);
    expect(await at(`endDate=${shifted(submitLog.createdAt, -1)}`)).to.deep.equal(["UPLOAD", "CREATE", "SIGN_IN"]);
    expect(await at(`startDate=${uploadLog.createdAt}&endDate=${uploadLog.createdAt}`)).to.deep.equal(["UPLOAD"]);
    const plusTwo = new Date(Date.parse(uploadLog.createdAt) + 2 * 3_600_000).toISOString().replace("Z", "+02:00");
    expect(await at(`endDate=${encodeURIComponent(plusTwo)}`)).to.deep.equal(["UPLOAD", "CREATE", "SIGN_IN"]);

    for (const bad of [
      "entityType=INVOICE",
      "actorType=ROBOT",
      "startDate=yesterday",
      `startDate=${submitLog.createdAt}&endDate=${createLog.createdAt}`,
      "limit=201",
      "limit=0",
      "page=0",
      "page=two",
      "action=",
    ]) {
      const refused = await admin.get(`/admin/audit-logs?${bad}`);
      expect(refused.status, bad).to.equal(400);
      expect(refused.body.code, bad).to.equal("VALIDATION_ERROR");
    }
    expect((await admin.get("/admin/audit-logs?limit=200")).status).to.equal(200);
  });

  it("pages through the audit trail: consistent totals, pages that add up to the whole list, newest first", async function () {
    const pager = await signIn("paging");
    const applicantId = pager.id;
    await submittedRequest("paging", pager);
    await draftRequest(pager);
    const whole = await admin.get(`/admin/audit-logs?actorId=${applicantId}&limit=200`);
    const total = whole.body.pagination.total as number;
    expect(total).to.equal(whole.body.logs.length);
    expect(total).to.equal(5); // SIGN_IN, CREATE, UPLOAD, SUBMIT, CREATE
    const pages: Json[] = [];
    for (let page = 1; page <= Math.ceil(total / 2); page++) {
      const response = await admin.get(`/admin/audit-logs?actorId=${applicantId}&limit=2&page=${page}`);
      expect(response.body.pagination).to.deep.equal({ page, limit: 2, total, totalPages: Math.ceil(total / 2) });
      expect(response.body.logs).to.have.length(Math.min(2, total - (page - 1) * 2));
      pages.push(...response.body.logs);
    }
    expect(pages.map((l) => l.logId)).to.deep.equal(whole.body.logs.map((l: Json) => l.logId));
    const beyond = await admin.get(`/admin/audit-logs?actorId=${applicantId}&limit=2&page=${Math.ceil(total / 2) + 1}`);
    expect(beyond.body.logs).to.deep.equal([]);
    expect(beyond.body.pagination.total).to.equal(total);

    const all = await admin.get("/admin/audit-logs");
    expect(all.body.pagination).to.include({ page: 1, limit: 50 });
    expect(all.body.logs.length).to.equal(Math.min(50, all.body.pagination.total));
    expect(nonIncreasing(all.body.logs.map((l: Json) => l.createdAt))).to.equal(true);
  });

  it("lists the outbox with filters, each confirmed record matching its receipt on chain", async function () {
    const stack = current();
    const submitted = await submittedRequest("outbox");

    const mints = await admin.get("/admin/blockchain/transactions?txType=MINT_NFT&limit=200");
    expect(mints.status, JSON.stringify(mints.body)).to.equal(200);
    expect(mints.body.transactions.length).to.be.at.least(1);
    expect(mints.body.transactions.every((t: Json) => t.txType === "MINT_NFT")).to.equal(true);
    expect(nonIncreasing(mints.body.transactions.map((t: Json) => t.createdAt))).to.equal(true);
    const mint = mints.body.transactions.find((t: Json) => t.transactionHash === submitted.transactionHash);
    expect(mint, "the creation's mint").to.not.equal(undefined);
    const receipt = (await driver.core.provider.getTransactionReceipt(submitted.transactionHash))!;
    const sent = (await driver.core.provider.getTransaction(submitted.transactionHash))!;
    expect(receipt.status).to.equal(1);
    expect(mint).to.deep.include({
      txType: "MINT_NFT",
      status: "CONFIRMED",
      requestId: submitted.requestId,
      error: null,
      from: receipt.from,
      to: receipt.to,
      nonce: sent.nonce,
      blockNumber: receipt.blockNumber,
      gasUsed: Number(receipt.gasUsed),
    });
    expect(mint.from.toLowerCase()).to.equal(stack.operatorAddress.toLowerCase());
    expect(mint.to.toLowerCase()).to.equal(stack.deployment.contracts.LicenceToken.toLowerCase());
    expect(mint.transactionId).to.match(UUID);
    expect(mint.broadcasts).to.be.at.least(1);
    expect(Date.parse(mint.confirmedAt)).to.be.at.least(Date.parse(mint.createdAt));

    // Our kinds beyond the spec's five, and the status filter with it.
    const submits = await admin.get("/admin/blockchain/transactions?txType=SUBMIT&status=CONFIRMED");
    expect(submits.body.transactions.every((t: Json) => t.txType === "SUBMIT" && t.status === "CONFIRMED")).to.equal(
      true,
    );
    const submit = submits.body.transactions.find((t: Json) => t.transactionHash === submitted.submitHash);
    expect(submit).to.deep.include({
      requestId: submitted.requestId,
      blockNumber: (await driver.core.provider.getTransactionReceipt(submitted.submitHash))!.blockNumber,
    });
    const anchors = await admin.get("/admin/blockchain/transactions?txType=DOC_UPDATE");
    expect(anchors.body.transactions.some((t: Json) => t.requestId === submitted.requestId)).to.equal(true);
    expect(
      (await admin.get("/admin/blockchain/transactions?txType=REVOKE")).body.transactions.every(
        (t: Json) => t.txType === "REVOKE",
      ),
    ).to.equal(true);

    // Unfiltered: newest first; page 2 of size 1 is the second of a page of size 2.
    const two = await admin.get("/admin/blockchain/transactions?limit=2");
    const second = await admin.get("/admin/blockchain/transactions?limit=1&page=2");
    expect(second.body.transactions[0].transactionId).to.equal(two.body.transactions[1].transactionId);
    expect(second.body.pagination).to.deep.equal({
      page: 2,
      limit: 1,
      total: two.body.pagination.total,
      totalPages: two.body.pagination.total,
    });
    const all = await admin.get("/admin/blockchain/transactions");
    expect(all.body.pagination).to.include({ page: 1, limit: 50 });
    expect(nonIncreasing(all.body.transactions.map((t: Json) => t.createdAt))).to.equal(true);
    const counts = await Promise.all(
      ["PENDING", "CONFIRMED", "FAILED"].map(
        async (s) =>
          (await admin.get(`/admin/blockchain/transactions?status=${s}&limit=1`)).body.pagination.total as number,
      ),
    );
    expect(counts.reduce((x, y) => x + y, 0)).to.equal(all.body.pagination.total);

    for (const bad of ["txType=TRANSFER", "status=DONE", "limit=201", "page=0"]) {
      const refused = await admin.get(`/admin/blockchain/transactions?${bad}`);
      expect(refused.status, bad).to.equal(400);
      expect(refused.body.code, bad).to.equal("VALIDATION_ERROR");
    }
  });

  it("shows a transaction PENDING until mined, then one CONFIRMED and a reverted one FAILED with its decoded error", async function () {
    const { core } = driver;
    const department = `RACE_${tag}`;
    const hashes = await recordRacingTransactions(driver, { code: department });
    // Reconciliation leaves transactions younger than 2 s alone: they are PENDING now.
    const pending = await admin.get(
      "/admin/blockchain/transactions?txType=REGISTER_DEPARTMENT&status=PENDING&limit=200",
    );
    const listed = hashes.map((h) => pending.body.transactions.find((t: Json) => t.transactionHash === h));
    for (const t of listed)
      expect(t).to.deep.include({
        status: "PENDING",
        blockNumber: null,
        gasUsed: null,
        confirmedAt: null,
        error: null,
        broadcasts: 0,
        requestId: null,
      });
    expect(listed[1].nonce - listed[0].nonce).to.equal(1);

    await eventually("both resolved from the chain", async () => {
      await core.gateway.reconcile();
      const { rows } = await core.pool.query(`SELECT status FROM chain_transactions WHERE tx_hash = ANY($1)`, [hashes]);
      return rows.every((r) => r.status !== "PENDING") ? true : undefined;
    });
    const receipts = await Promise.all(hashes.map((h) => core.provider.getTransactionReceipt(h)));
    expect(receipts.map((r) => r!.status)).to.deep.equal([1, 0]);

    const confirmed = (
      await admin.get("/admin/blockchain/transactions?txType=REGISTER_DEPARTMENT&status=CONFIRMED&limit=200")
    ).body.transactions.find((t: Json) => t.transactionHash === hashes[0]);
    expect(confirmed).to.deep.include({
      blockNumber: receipts[0]!.blockNumber,
      gasUsed: Number(receipts[0]!.gasUsed),
      error: null,
    });
    expect(confirmed.broadcasts).to.be.at.least(1);
    const failedList = await admin.get("/admin/blockchain/transactions?status=FAILED&limit=200");
    expect(failedList.body.transactions.every((t: Json) => t.status === "FAILED")).to.equal(true);
    const failed = failedList.body.transactions.find((t: Json) => t.transactionHash === hashes[1]);
    expect(failed).to.deep.include({
      txType: "REGISTER_DEPARTMENT",
      blockNumber: receipts[1]!.blockNumber,
      gasUsed: Number(receipts[1]!.gasUsed),
      confirmedAt: null,
      from: receipts[1]!.from,
    });
    expect(failed.error).to.deep.include({ name: "DepartmentAlreadyRegistered", args: [b32(department)] });
    expect(failed.error.message).to.be.a("string").and.not.equal("");
    expect((await admin.get("/admin/stats")).body.blockchain.failedTransactions).to.be.at.least(1);
  });

  it("reports the chain as the node has it: chain id, network id, the single local node and the latest block", async function () {
    const stack = current();
    const provider = driver.core.provider;
    await draftRequest(); // a new block, so the head below is one this test made
    const headBefore = await provider.getBlockNumber();
    const status = await admin.get("/admin/blockchain/status");
    const headAfter = await provider.getBlockNumber();
    expect(status.status, JSON.stringify(status.body)).to.equal(200);
    expect(status.body.network).to.deep.equal({
      chainId: stack.config.chainId,
      networkId: Number(await provider.send("net_version", [])),
      consensus: "none (single local node, automine)",
      validators: [],
    });
    expect(status.body.network.chainId).to.equal(Number(await provider.send("eth_chainId", [])));
    const head = status.body.latestBlock;
    expect(head.number).to.be.within(headBefore, headAfter);
    const onChain = (await provider.getBlock(head.number))!;
    expect(head).to.deep.equal({
      number: onChain.number,
      hash: onChain.hash,
      timestamp: new Date(onChain.timestamp * 1000).toISOString(),
    });
    expect(status.body.nodes).to.have.length(1);
    expect(status.body.nodes[0]).to.deep.include({
      source: "rpc",
      isValidator: true,
      isHealthy: true,
      peers: 0,
      latestBlock: head.number,
      address: null,
    });
    expect(status.body.nodes[0].clientVersion).to.match(/^anvil\//);
    expect(status.body.nodes[0].nodeId).to.equal(status.body.nodes[0].clientVersion);

    // The head moves with the chain.
    await draftRequest();
    expect((await admin.get("/admin/blockchain/status")).body.latestBlock.number).to.be.greaterThan(head.number);
  });

  it("documents the four routes in the OpenAPI document as administrator-only, with their schemas", async function () {
    const doc = (await (await fetch(`${api}/api/v1/openapi.json`)).json()) as Json;
    for (const path of [
      "/api/v1/admin/stats",
      "/api/v1/admin/audit-logs",
      "/api/v1/admin/blockchain/status",
      "/api/v1/admin/blockchain/transactions",
    ]) {
      const key = Object.keys(doc.paths).find((p) => p === path || p === path.replace("/api/v1", ""));
      expect(key, path).to.not.equal(undefined);
      expect(doc.paths[key!].get.security).to.deep.equal([{ AdminAuth: ["admin"] }]);
    }
    expect(doc.components.schemas).to.include.keys(
      "AdminStats",
      "AuditLog",
      "BlockchainStatus",
      "BlockchainTransaction",
      "Pagination",
    );
  });

  describe("status probes against a scripted RPC (Besu, slow and unreachable nodes)", function () {
    const [a, b, c, d] = Array.from({ length: 4 }, () => Wallet.createRandom());
    const nodeId = (w: { signingKey: { publicKey: string } }) => `0x${w.signingKey.publicKey.slice(4)}`;
    const head = { number: "0x64", hash: `0x${"ab".repeat(32)}`, timestamp: "0x65f00000" };
    const besu =
      (overrides: Record<string, (params: unknown[]) => unknown> = {}): RpcSend =>
      async (method, params) => {
        const answers: Record<string, (params: unknown[]) => unknown> = {
          eth_chainId: () => "0x539",
          eth_getBlockByNumber: () => head,
          net_version: () => "1337",
          net_peerCount: () => "0x2",
          web3_clientVersion: () => "besu/v25.4.1/linux-x86_64/openjdk-java-21",
          eth_syncing: () => false,
          admin_nodeInfo: () => ({ id: nodeId(a), name: "besu/v25.4.1" }),
          admin_peers: () => [
            { id: nodeId(b), name: "besu/v25.4.1", protocols: { eth: { head: "0xb0" } } },
            { id: nodeId(d), name: "besu/v25.4.1", protocols: { eth: { head: "0xd0" } } },
          ],
          qbft_getValidatorsByBlockNumber: () => [a.address, b.address, c.address].map((x) => x.toLowerCase()),
          eth_getBlockByHash: ([hash]) =>
            ({ "0xb0": { ...head, number: "0x60" }, "0xd0": { ...head, number: "0x32" } })[hash as string] ?? null,
          ...overrides,
        };
        const answer = answers[method];
        if (!answer) throw Object.assign(new Error("Method not found"), { code: -32601 });
        return answer(params);
      };

    it("names QBFT, lists the node, its peers and an unreachable validator, with each one's health", async function () {
      const status = await networkStatus(besu(), { expectedChainId: 1337 });
      expect(status.network).to.deep.equal({
        chainId: 1337,
        networkId: 1337,
        consensus: "QBFT",
        validators: [a.address, b.address, c.address],
      });
      expect(status.latestBlock).to.deep.equal({
        number: 100,
        hash: head.hash,
        timestamp: new Date(0x65f00000 * 1000).toISOString(),
      });
      expect(
        status.nodes.map((n) => [n.source, n.address, n.isValidator, n.isHealthy, n.peers, n.latestBlock]),
      ).to.deep.equal([
        ["rpc", a.address, true, true, 2, 100],
        ["peer", b.address, true, true, null, 96],
        ["peer", d.address, false, false, null, 50], // 50 blocks behind
        ["validator", c.address, true, false, null, null], // in the set, not connected
      ]);
      expect(status.nodes[0].nodeId).to.equal(nodeId(a));
    });

    it("names IBFT 2.0 and Clique from the API that answers, and marks a node on another chain or syncing unhealthy", async function () {
      const ibft = await networkStatus(
        besu({
          qbft_getValidatorsByBlockNumber: () => {
            throw new Error("Method not found");
          },
          ibft_getValidatorsByBlockNumber: () => [a.address],
        }),
        { expectedChainId: 1337 },
      );
      expect(ibft.network.consensus).to.equal("IBFT 2.0");
      const clique = await networkStatus(
        besu({
          qbft_getValidatorsByBlockNumber: () => {
            throw new Error("Method not found");
          },
          clique_getSigners: () => [b.address],
        }),
        { expectedChainId: 1337 },
      );
      expect(clique.network.consensus).to.equal("Clique");
      expect(clique.nodes[0].isValidator).to.equal(false);
      expect((await networkStatus(besu(), { expectedChainId: 1 })).nodes[0].isHealthy).to.equal(false);
      expect(
        (
          await networkStatus(besu({ eth_syncing: () => ({ currentBlock: "0x1", highestBlock: "0x64" }) }), {
            expectedChainId: 1337,
          })
        ).nodes[0].isHealthy,
      ).to.equal(false);
    });

    it("answers within its probe timeout when optional probes hang", async function () {
      const never = () => new Promise(() => {});
      const started = Date.now();
      const status = await networkStatus(besu({ admin_peers: never, net_peerCount: never, net_version: never }), {
        expectedChainId: 1337,
        timeoutMs: 200,
      });
      expect(Date.now() - started).to.be.below(1_000);
      expect(status.network.networkId).to.equal(1337); // from the chain id
      expect(status.nodes.map((n) => [n.source, n.address])).to.deep.equal([
        ["rpc", a.address],
        ["validator", b.address],
        ["validator", c.address],
      ]);
      expect(status.nodes[0].peers).to.equal(null);
    });

    it("is CHAIN_UNAVAILABLE (503) when the chain id or the latest block does not come in time", async function () {
      const refused = besu({
        eth_chainId: () => {
          throw Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:8545"), { code: "ECONNREFUSED" });
        },
      });
      const hanging = besu({ eth_getBlockByNumber: () => new Promise(() => {}) });
      for (const send of [refused, hanging]) {
        const error = await networkStatus(send, { expectedChainId: 1337, timeoutMs: 200 }).then(
          () => undefined,
          (e) => e,
        );
        expect(error).to.be.instanceOf(ChainUnavailableError);
        expect(toAppError(error)).to.include({ status: 503, code: "CHAIN_UNAVAILABLE" });
      }
    });
  });

  it("answers 503 CHAIN_UNAVAILABLE for the status while the chain is stopped; the database reads still answer", async function () {
    await current().stopChain("clean");
    try {
      const started = Date.now();
      const down = await admin.get("/admin/blockchain/status");
      expect(Date.now() - started).to.be.below(5_000);
      expectError(down, 503, "CHAIN_UNAVAILABLE");
      expect(down.headers.get("retry-after")).to.equal("5");
      for (const path of ["/admin/stats", "/admin/audit-logs", "/admin/blockchain/transactions"])
        expect((await admin.get(path)).status, path).to.equal(200);
    } finally {
      await current().startChain();
    }
    await eventually("the status once the chain is back", async () =>
      (await admin.get("/admin/blockchain/status")).status === 200 ? true : undefined,
    );
  });
});
