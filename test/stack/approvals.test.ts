import { expect } from "chai";
import { approvalRegistry } from "../../api/src/chain/contracts.ts";
import { createDepartment, departmentClient } from "./support/departmentClient.ts";
import { b32, createDriver, documents, sha, uuidBytes, type Driver } from "./support/platformDriver.ts";
import { jpeg, pdf, png } from "./support/sampleFiles.ts";
import { seedWorkflow } from "./support/seedWorkflow.ts";
import { adminSession, applicantClient, letters, type Applicant } from "./support/sessions.ts";
import { current } from "./support/stackFixture.ts";
import { submittedRequest } from "./support/submittedRequest.ts";
import { stage, workflow } from "./support/workflowDefinition.ts";
import type { apiClient, Json } from "./support/httpClient.ts";
import { expectError } from "./support/httpClient.ts";

/**
 * The multi-department review through HTTP, each decision a transaction from the department's own wallet, with the
 * chain's state read back by plain contract calls after each step.
 */
describe("departments' review (HTTP, real stack)", function () {
  const run = `${Date.now() % 1e7}`;
  const tag = letters(run);
  const codes = { A: `PLAN_${tag}`, B: `LAND_${tag}`, C: `FIRE_${tag}`, D: `HEALTH_${tag}` };
  let driver: Driver;
  let api: string;
  let admin: ReturnType<typeof apiClient>;
  let applicant: Applicant;
  const departments: Record<string, Awaited<ReturnType<typeof createDepartment>>> = {};
  const as = (name: keyof typeof codes) => departmentClient(api, departments[name]);

  before(async function () {
    const stack = current();
    driver = await createDriver(stack);
    let adminToken: string;
    ({ api, adminToken, admin } = await adminSession(stack));
    for (const [name, code] of Object.entries(codes))
      departments[name] = await createDepartment(api, adminToken, { code, name: `${name} department` });
    await seedWorkflow(
      stack,
      driver,
      workflow(
        "BUILDING_PERMIT",
        "Building permit (review test)",
        stage("planning", "Planning", "SEQUENTIAL", { [codes.A]: ["SITE_PLAN"], [codes.B]: ["OWNERSHIP_DEED"] }),
        stage("safety", "Safety", "PARALLEL", { [codes.C]: ["FIRE_SAFETY"], [codes.D]: ["SITE_PLAN"] }),
      ),
    );
    applicant = await applicantClient(api, { id: `review-${run}`, name: "Rita Review" });
  });
  after(async () => driver?.close());

  const submitted = (tag: string) =>
    submittedRequest(applicant, "BUILDING_PERMIT", {
      SITE_PLAN: pdf(`plan ${tag} ${run}`),
      OWNERSHIP_DEED: png(`deed ${tag} ${run}`),
      FIRE_SAFETY: jpeg(`fire ${tag} ${run}`),
    });

  /** The decisions of a stage as the chain has them, by department code. */
  async function chainDecisions(tokenId: number, stage: number): Promise<Record<string, string>> {
    const names = ["PENDING", "APPROVED", "REJECTED", "CHANGES_REQUESTED", "REVIEW_REQUIRED"];
    const [ids, statuses] = approvalRegistry.decodeFunctionResult(
      "decisionsOf",
      await driver.core.provider.call({
        to: current().deployment.contracts.ApprovalRegistry,
        data: approvalRegistry.encodeFunctionData("decisionsOf", [tokenId, stage]),
      }),
    );
    const result: Record<string, string> = {};
    for (let i = 0; i < ids.length; i++) {
      const [{ code }] = approvalRegistry.decodeFunctionResult(
        "departmentRecord",
        await driver.core.provider.call({
          to: current().deployment.contracts.ApprovalRegistry,
          data: approvalRegistry.encodeFunctionData("departmentRecord", [ids[i]]),
        }),
      );
      result[(await import("ethers")).decodeBytes32String(code)] = names[Number(statuses[i])];
    }
    return result;
  }
  const chainStatus = async (tokenId: number) =>
    ["NONE", "DRAFT", "SUBMITTED", "PENDING_RESUBMISSION", "APPROVED", "REJECTED", "CANCELLED", "SUSPENDED", "REVOKED"][
      Number((await driver.licence(tokenId)).status)
    ];
  const outboxFrom = async (wallet: string) =>
    (
      await driver.core.pool.query(`SELECT count(*)::int AS n FROM chain_transactions WHERE from_address = $1`, [
        wallet.toLowerCase(),
      ])
    ).rows[0].n as number;

  it("walks a request through both stages with a request for changes and an invalidation, agreeing with the chain at every step", async function () {
    const { id, tokenId, docs } = await submitted("main");

    // Pending: only the first department of the SEQUENTIAL stage is asked now.
    const pendingA = await as("A").get(`/requests/pending?department=${codes.A}`);
    expect(pendingA.status).to.equal(200);
    expect(pendingA.body.requests.map((r: Json) => r.requestId)).to.include(id);
    expect(
      (await as("B").get(`/requests/pending?department=${codes.B}`)).body.requests.map((r: Json) => r.requestId),
    ).to.not.include(id);
    expectError(await as("A").get(`/requests/pending?department=${codes.B}`), 403);

    // Out of turn, and not in this stage: refused, nothing recorded from their wallets.
    const beforeB = await outboxFrom(departments.B.walletAddress);
    const early = await as("B").post(`/requests/${id}/approve`, {
      remarks: "fine",
      reviewedDocuments: [docs.OWNERSHIP_DEED],
    });
    expectError(early, 409, "NOT_YOUR_TURN");
    const notHere = await as("C").post(`/requests/${id}/approve`, { remarks: "fine", reviewedDocuments: [] });
    expectError(notHere, 409, "NOT_PENDING");
    expect(await outboxFrom(departments.B.walletAddress)).to.equal(beforeB);

    const approvedA = await as("A").post(`/requests/${id}/approve`, {
      remarks: "Plan complies with zoning",
      reviewedDocuments: [docs.SITE_PLAN],
    });
    expect(approvedA.status).to.equal(200);
    expect(approvedA.body).to.deep.include({
      status: "APPROVED",
      workflowStatus: { currentStage: "Planning", isComplete: false, nextPendingDepartments: [codes.B] },
    });
    const sent = await driver.core.provider.getTransaction(approvedA.body.transactionHash);
    expect(sent!.from).to.equal(departments.A.walletAddress); // signed by the department's own wallet
    expect(await chainDecisions(tokenId, 0)).to.deep.equal({ [codes.A]: "APPROVED", [codes.B]: "PENDING" });
    expect(
      (await as("A").post(`/requests/${id}/approve`, { remarks: "again", reviewedDocuments: [] })).body.code,
    ).to.equal("ALREADY_DECIDED");

    // B asks for a new deed: the request goes back to the applicant.
    const changes = await as("B").post(`/requests/${id}/request-changes`, {
      remarks: "Deed is not certified",
      requiredDocuments: ["OWNERSHIP_DEED"],
    });
    expect(changes.status).to.equal(200);
    expect(changes.body.status).to.equal("PENDING_RESUBMISSION");
    expect(await chainStatus(tokenId)).to.equal("PENDING_RESUBMISSION");

    // The applicant replaces the deed (B had not approved: nothing invalidated) and the plan (A's approval falls).
    const deed = await applicant.upload(
      "PUT",
      `/requests/${id}/documents/${docs.OWNERSHIP_DEED}`,
      png(`deed v2 ${run}`),
      "deed2.png",
    );
    expect(deed.body.invalidatedApprovals).to.deep.equal([]);
    const plan = await applicant.upload(
      "PUT",
      `/requests/${id}/documents/${docs.SITE_PLAN}`,
      pdf(`plan v2 ${run}`),
      "plan2.pdf",
    );
    expect(plan.status).to.equal(200);
    expect(plan.body.invalidatedApprovals).to.deep.equal([codes.A]);
    expect(await chainDecisions(tokenId, 0)).to.deep.equal({
      [codes.A]: "REVIEW_REQUIRED",
      [codes.B]: "CHANGES_REQUESTED",
    });

    const resubmitted = await applicant.post(`/requests/${id}/submit`);
    expect(resubmitted.body.status).to.equal("SUBMITTED");
    expect(resubmitted.body.pendingDepartments).to.deep.equal([codes.A]);

    await as("A").post(`/requests/${id}/approve`, { remarks: "New plan checked", reviewedDocuments: [docs.SITE_PLAN] });
    const approvedB = await as("B").post(`/requests/${id}/approve`, {
      remarks: "Certified deed",
      reviewedDocuments: [docs.OWNERSHIP_DEED],
    });
    expect(approvedB.body.workflowStatus).to.deep.equal({
      currentStage: "Safety",
      isComplete: false,
      nextPendingDepartments: [codes.C, codes.D],
    });
    expect(
      (await as("D").get(`/requests/pending?department=${codes.D}`)).body.requests.map((r: Json) => r.requestId),
    ).to.include(id);

    await as("D").post(`/requests/${id}/approve`, { remarks: "ok", reviewedDocuments: [docs.SITE_PLAN] });
    const final = await as("C").post(`/requests/${id}/approve`, {
      remarks: "Fire exits adequate",
      reviewedDocuments: [docs.FIRE_SAFETY],
    });
    expect(final.body.workflowStatus).to.deep.equal({ currentStage: "", isComplete: true, nextPendingDepartments: [] });
    expect(await chainStatus(tokenId)).to.equal("APPROVED");

    const detail = await applicant.get(`/requests/${id}`);
    expect(detail.body.status).to.equal("APPROVED");
    expect(detail.body.approvedAt).to.be.a("string");
    expect(Date.parse(detail.body.expiresAt) - Date.parse(detail.body.approvedAt)).to.equal(730 * 86_400_000);

    const all = await applicant.get(`/requests/${id}/approvals?includeInvalidated=true`);
    expect(all.body.approvals.map((a: Json) => [a.departmentCode, a.status, a.isActive])).to.deep.equal([
      [codes.A, "REVIEW_REQUIRED", false],
      [codes.B, "CHANGES_REQUESTED", false],
      [codes.A, "APPROVED", true],
      [codes.B, "APPROVED", true],
      [codes.D, "APPROVED", true],
      [codes.C, "APPROVED", true],
    ]);
    expect(all.body.approvals[0]).to.include({ remarks: "Plan complies with zoning" });
    expect(all.body.approvals[0].invalidatedAt).to.be.a("string");
    expect(all.body.approvals[0].reviewedDocuments).to.deep.equal([docs.SITE_PLAN]);
    const standing = await applicant.get(`/requests/${id}/approvals`);
    expect(standing.body.approvals).to.have.length(4);

    const timeline = (await applicant.get(`/requests/${id}/timeline`)).body.events as Json[];
    const types = timeline.map((e) => e.eventType);
    for (const type of [
      "APPROVAL_RECEIVED",
      "CHANGES_REQUESTED",
      "DOCUMENT_UPDATED",
      "APPROVAL_INVALIDATED",
      "REQUEST_RESUBMITTED",
      "STAGE_COMPLETED",
      "REQUEST_APPROVED",
    ])
      expect(types).to.include(type);
    expect(timeline.find((e) => e.eventType === "CHANGES_REQUESTED")!.actor).to.deep.equal({
      type: "DEPARTMENT",
      id: codes.B,
      name: "B department",
    });
    expect(all.body.approvals[0].departmentName).to.equal("A department");

    // Each decision left an audit record with the department as actor.
    const audits = await driver.core.pool.query(
      `SELECT action, actor_type, actor_id FROM audit_logs WHERE entity_type = 'APPROVAL' AND entity_id = $1 ORDER BY created_at`,
      [id],
    );
    expect(audits.rows.map((r) => `${r.action}:${r.actor_id}`)).to.deep.equal([
      `APPROVE:${codes.A}`,
      `REQUEST_CHANGES:${codes.B}`,
      `APPROVE:${codes.A}`,
      `APPROVE:${codes.B}`,
      `APPROVE:${codes.D}`,
      `APPROVE:${codes.C}`,
    ]);

    // Administrators suspend, reinstate and revoke the issued licence.
    expectError(await applicant.post(`/requests/${id}/suspend`, { reasonCode: 3 }), 403);
    expect((await admin.post(`/requests/${id}/suspend`, { reasonCode: 3, reason: "inspection" })).body.status).to.equal(
      "SUSPENDED",
    );
    expect(await chainStatus(tokenId)).to.equal("SUSPENDED");
    expect((await admin.post(`/requests/${id}/reinstate`, {})).body.status).to.equal("APPROVED");
    expect((await admin.post(`/requests/${id}/revoke`, { reasonCode: 4, reason: "fraud found" })).body.status).to.equal(
      "REVOKED",
    );
    expect(await chainStatus(tokenId)).to.equal("REVOKED");
    expectError(await admin.post(`/requests/${id}/revoke`, { reasonCode: 4 }), 409, "INVALID_STATE");
  });

  it("a document added under review reopens every stage's approvals and sends review back to the first stage", async function () {
    const { id, tokenId, docs } = await submitted("added");
    for (const [key, document] of [
      ["A", docs.SITE_PLAN],
      ["B", docs.OWNERSHIP_DEED],
      ["D", docs.SITE_PLAN],
    ] as const) {
      const approved = await as(key).post(`/requests/${id}/approve`, { remarks: "ok", reviewedDocuments: [document] });
      expect(approved.status, JSON.stringify(approved.body)).to.equal(200);
    }
    expect(await chainDecisions(tokenId, 1)).to.deep.equal({ [codes.C]: "PENDING", [codes.D]: "APPROVED" });

    // Nobody reviewed the new document: every approval of every stage reached falls, and review restarts at stage 1.
    // (The API adds no document to a submitted request, whose types all exist by then: the operator's key can.)
    const added = await driver.send(
      "DOC_UPDATE",
      driver.operator,
      "DocumentRegistry",
      documents.encodeFunctionData("anchorDocument", [
        tokenId,
        uuidBytes(Number(run) % 1_000_000),
        b32("ANNEX"),
        sha(`annex ${run}`),
      ]),
    );
    expect(added.receipt.status).to.equal(1);
    expect(await chainDecisions(tokenId, 0)).to.deep.equal({
      [codes.A]: "REVIEW_REQUIRED",
      [codes.B]: "REVIEW_REQUIRED",
    });
    expect(await chainDecisions(tokenId, 1)).to.deep.equal({ [codes.C]: "PENDING", [codes.D]: "REVIEW_REQUIRED" });
    const listed = await applicant.get(`/requests/${id}/approvals?includeInvalidated=true`);
    expect(listed.body.approvals.map((a: Json) => [a.departmentCode, a.status, a.isActive])).to.deep.equal([
      [codes.A, "REVIEW_REQUIRED", false],
      [codes.B, "REVIEW_REQUIRED", false],
      [codes.D, "REVIEW_REQUIRED", false],
    ]);
    expect((await applicant.get(`/requests/${id}/approvals`)).body.approvals).to.deep.equal([]);
    expect(
      (await as("A").get(`/requests/pending?department=${codes.A}`)).body.requests.map((r: Json) => r.requestId),
      "the first stage's first department is asked again",
    ).to.include(id);
    expect(
      (await as("C").get(`/requests/pending?department=${codes.C}`)).body.requests.map((r: Json) => r.requestId),
      "the second stage waits",
    ).to.not.include(id);

    const again = await as("A").post(`/requests/${id}/approve`, { remarks: "With the annex", reviewedDocuments: [] });
    expect(again.status, JSON.stringify(again.body)).to.equal(200);
    expect(again.body.workflowStatus).to.deep.equal({
      currentStage: "Planning",
      isComplete: false,
      nextPendingDepartments: [codes.B],
    });
    const types = ((await applicant.get(`/requests/${id}/timeline`)).body.events as Json[]).map((e) => e.eventType);
    expect(types).to.include("APPROVAL_INVALIDATED");
  });

  it("lets a department see the requests routed to it, and nothing else", async function () {
    const { id } = await submitted("routed");
    const asA = await as("A").get(`/requests/${id}`);
    expect(asA.status).to.equal(200);
    const listed = await as("A").get(`/requests?limit=100`);
    expect(listed.body.requests.map((r: Json) => r.requestId)).to.include(id);
    const other = await createDepartment(api, (await adminSession()).adminToken, {
      code: `OTHER_${tag}`,
      name: "Other",
    });
    expectError(await departmentClient(api, other).get(`/requests/${id}`), 404);
  });

  it("rejects for good (FAIL_REQUEST) with the reason on chain", async function () {
    const { id, tokenId } = await submitted("reject");
    const rejected = await as("A").post(`/requests/${id}/reject`, {
      remarks: "Unsafe structure",
      reason: "SAFETY_VIOLATION",
    });
    expect(rejected.status).to.equal(200);
    expect(rejected.body).to.deep.include({
      status: "REJECTED",
      workflowStatus: { currentStage: "", isComplete: false, nextPendingDepartments: [] },
    });
    const record = await driver.licence(tokenId);
    expect(record.status).to.equal(5n);
    expect(record.reasonCode).to.equal(1n);
    expect((await applicant.get(`/requests/${id}`)).body.status).to.equal("REJECTED");
    expectError(await as("B").post(`/requests/${id}/reject`, { remarks: "x", reason: "BECAUSE" }), 400);
  });

  describe("other stage shapes and rejection rules", function () {
    const docs3 = { [codes.A]: ["SITE_PLAN"], [codes.B]: ["OWNERSHIP_DEED"], [codes.C]: ["FIRE_SAFETY"] };
    const oneStage = (extra: Parameters<typeof stage>[4]) =>
      seedWorkflow(
        current(),
        driver,
        workflow("BUILDING_PERMIT", "Shape test", stage("only", "Review", "PARALLEL", docs3, extra)),
      );

    it("RETRY_STAGE: a rejection clears the stage and returns the request; after resubmission everyone decides again", async function () {
      await oneStage({ onRejection: "RETRY_STAGE" });
      const { id, tokenId } = await submitted("retry");
      await as("A").post(`/requests/${id}/approve`, { remarks: "ok", reviewedDocuments: [] });
      const rejected = await as("B").post(`/requests/${id}/reject`, {
        remarks: "Deed unreadable",
        reason: "INCOMPLETE_DOCUMENTS",
      });
      expect(rejected.status).to.equal(200);
      expect(await chainStatus(tokenId)).to.equal("PENDING_RESUBMISSION");
      expect(await chainDecisions(tokenId, 0)).to.deep.equal({
        [codes.A]: "PENDING",
        [codes.B]: "PENDING",
        [codes.C]: "PENDING",
      });
      const resubmitted = await applicant.post(`/requests/${id}/submit`);
      expect(resubmitted.body.pendingDepartments).to.deep.equal([codes.A, codes.B, codes.C]);
    });

    it("ESCALATE: an administrator returns the rejection to the department, then upholds the next one", async function () {
      await oneStage({ executionType: "SEQUENTIAL", onRejection: "ESCALATE" });
      const { id, tokenId, docs } = await submitted("escalate");
      await as("A").post(`/requests/${id}/reject`, { remarks: "Plan unclear", reason: "OTHER" });
      expect(await chainStatus(tokenId)).to.equal("SUBMITTED"); // waiting for an administrator
      // Documents are frozen while escalated.
      const frozen = await applicant.upload(
        "PUT",
        `/requests/${id}/documents/${docs.SITE_PLAN}`,
        pdf(`frozen ${run}`),
        "p.pdf",
      );
      expect(frozen.status).to.equal(409);
      expect(
        (await as("A").post(`/requests/${id}/approve`, { remarks: "x", reviewedDocuments: [] })).body.code,
      ).to.equal("INVALID_STATE");
      const returned = await admin.post(`/requests/${id}/resolve-escalation`, {
        decision: "RETURN",
        remarks: "Please look again",
      });
      expect(returned.status).to.equal(200);
      expect(await chainDecisions(tokenId, 0)).to.deep.include({ [codes.A]: "PENDING" });
      // The index records the contract's cause (EscalationReturned); the API keeps its own name for it.
      const history = await applicant.get(`/requests/${id}/approvals?includeInvalidated=true`);
      expect(
        history.body.approvals.map((a: Json) => [a.departmentCode, a.status, a.isActive, a.invalidationReason]),
      ).to.deep.equal([[codes.A, "REJECTED", false, "ESCALATION_SENT_BACK"]]);
      await as("A").post(`/requests/${id}/reject`, { remarks: "Still unclear", reason: "POLICY_VIOLATION" });
      const upheld = await admin.post(`/requests/${id}/resolve-escalation`, { decision: "REJECT", reasonCode: 3 });
      expect(upheld.body.status).to.equal("REJECTED");
      expect(await chainStatus(tokenId)).to.equal("REJECTED");
      expect((await admin.post(`/requests/${id}/resolve-escalation`, { decision: "REJECT" })).body.code).to.equal(
        "NOT_ESCALATED",
      );
    });

    it("ANY: one approval completes the stage", async function () {
      await oneStage({ completionCriteria: "ANY", optional: [codes.A, codes.B, codes.C] });
      const { id, tokenId } = await submitted("any");
      const approved = await as("B").post(`/requests/${id}/approve`, { remarks: "ok", reviewedDocuments: [] });
      expect(approved.body.workflowStatus.isComplete).to.equal(true);
      expect(await chainStatus(tokenId)).to.equal("APPROVED");
    });

    it("THRESHOLD 2 of 3 with a mandatory department: two approvals are not enough without it", async function () {
      await oneStage({ completionCriteria: "THRESHOLD", threshold: 2, optional: [codes.A, codes.B] });
      const { id, tokenId } = await submitted("threshold");
      await as("A").post(`/requests/${id}/approve`, { remarks: "ok", reviewedDocuments: [] });
      const two = await as("B").post(`/requests/${id}/approve`, { remarks: "ok", reviewedDocuments: [] });
      expect(two.body.workflowStatus).to.deep.equal({
        currentStage: "Review",
        isComplete: false,
        nextPendingDepartments: [codes.C],
      });
      const three = await as("C").post(`/requests/${id}/approve`, { remarks: "ok", reviewedDocuments: [] });
      expect(three.body.workflowStatus.isComplete).to.equal(true);
      expect(await chainStatus(tokenId)).to.equal("APPROVED");
    });
  });
});
