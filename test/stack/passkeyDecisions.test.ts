/**
 * Decisions signed by a department's reviewers' passkeys (2 of 3) over HTTP on the real stack: one signature leaves
 * the signing request collecting (and relayed alone the chain refuses it), the second relays it and the chain
 * records the passkey account as the signer. The attacks a console must refuse: another digest's assertion, a
 * replay, another origin or RP ID, another reviewer's passkey, another department's reviewer, a removed passkey or
 * reviewer; a signing request gone stale fails with the decide use case's code. An API-key department decides on.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { expect } from "chai";
import { Contract, getAddress, keccak256, toUtf8Bytes } from "ethers";
import { DepartmentPasskeyAccountAbi } from "../../abis/index.ts";
import { approvalRegistry } from "../../api/src/chain/contracts.ts";
import { accountAssertion, encodePasskeySignature } from "../../api/src/domain/passkeys/passkeySignature.ts";
import { createDepartment, departmentClient, type CreatedTestDepartment } from "./support/departmentClient.ts";
import { apiClient, type Json, expectError } from "./support/httpClient.ts";
import { eventually } from "./support/eventually.ts";
import { createDriver, registry, type Driver } from "./support/platformDriver.ts";
import {
  assertionFor,
  digestOfTypedData,
  registeredReviewer,
  relyingPartyOf,
  sign,
  type Reviewer,
} from "./support/passkeyReviewers.ts";
import { pdf, png } from "./support/sampleFiles.ts";
import { seedWorkflow } from "./support/seedWorkflow.ts";
import { adminSession, applicantClient, letters } from "./support/sessions.ts";
import { current } from "./support/stackFixture.ts";
import { submittedRequest } from "./support/submittedRequest.ts";
import { stage, workflow } from "./support/workflowDefinition.ts";
import { REPO_ROOT } from "../../scripts/stack/stack.ts";

describe("decisions signed by reviewers' passkeys, 2 of 3 (HTTP, real stack)", function () {
  const run = letters(`${Date.now() % 1e7}`);
  let api: string;
  let driver: Driver;
  let admin: ReturnType<typeof apiClient>;
  let passkeyDept: CreatedTestDepartment;
  let keyDept: CreatedTestDepartment;
  let rp: { origin: string; rpId: string };
  let ana: Reviewer;
  let ben: Reviewer;
  let cy: Reviewer;
  let eve: Reviewer;
  let account: string;
  let request: { id: string; docs: Record<string, string>; hashes: Record<string, string> };
  let approval: Json;
  let rejection: Json;
  let anaApproval: ReturnType<typeof assertionFor>;

  before(async function () {
    const stack = current();
    driver = await createDriver(stack);
    let adminToken: string;
    ({ api, adminToken, admin } = await adminSession(stack));
    [passkeyDept, keyDept] = await Promise.all([
      createDepartment(api, adminToken, { code: `PKD_${run}`, name: "Planning board (passkeys)" }),
      createDepartment(api, adminToken, { code: `KEYD_${run}`, name: "Land registry (API key)" }),
    ]);
    rp = await relyingPartyOf(api, passkeyDept);
    ana = await registeredReviewer(api, passkeyDept, "Ana", rp);
    ben = await registeredReviewer(api, passkeyDept, "Ben", rp);
    cy = await registeredReviewer(api, passkeyDept, "Cy", rp);
    eve = await registeredReviewer(api, keyDept, "Eve", rp);

    // The passkey department moves its wallet to its reviewers' account (passkeyCustody.test.ts tests the move).
    const started = await departmentClient(api, passkeyDept).post(`/departments/${passkeyDept.code}/passkey-custody`, {
      threshold: 2,
    });
    expect(started.status, JSON.stringify(started.body)).to.equal(202);
    account = started.body.account.address;
    await sign(ana, started.body.signingRequest, rp);
    expect((await sign(ben, started.body.signingRequest, rp)).body.status).to.equal("SUBMITTED");
    const proposed = await admin.get(`/departments/${passkeyDept.code}`);
    const effectiveAt = Date.parse(proposed.body.pendingWalletChange.effectiveAt);
    await new Promise((r) => setTimeout(r, Math.max(0, effectiveAt - Date.now()) + 1500));
    const activated = await admin.post(`/departments/${passkeyDept.code}/wallet-change/activate`);
    expect(activated.status, JSON.stringify(activated.body)).to.equal(200);

    // BUILDING_PERMIT: other stack tests expect TRADE_LICENSE to have no workflow.
    await seedWorkflow(
      stack,
      driver,
      workflow(
        "BUILDING_PERMIT",
        "Building permit (passkey decisions test)",
        stage("review", "Review", "PARALLEL", {
          [passkeyDept.code]: ["SITE_PLAN"],
          [keyDept.code]: ["OWNERSHIP_DEED"],
        }),
      ),
    );
    const applicant = await applicantClient(api, { id: `pkd-${run}`, name: "Pat Passkey" });
    request = await submittedRequest(applicant, "BUILDING_PERMIT", {
      SITE_PLAN: pdf(`plan ${run}`),
      OWNERSHIP_DEED: png(`deed ${run}`),
    });
  });
  after(async () => driver?.close());

  const signatures = async (id: string) => (await ana.browser.get(`/console/signing-requests/${id}`)).body.signatures;

  it("opens a decision for signing only from a reviewer's console session of a passkey department", async function () {
    const body = { decision: "APPROVED", remarks: "Site plan conforms", reviewedDocuments: [request.docs.SITE_PLAN] };
    const byKey = await departmentClient(api, passkeyDept).post(
      `/console/requests/${request.id}/signing-requests`,
      body,
    );
    expect(byKey.status, "the department's API key is not a reviewer").to.equal(403);
    const custodial = await eve.browser.post(`/console/requests/${request.id}/signing-requests`, {
      ...body,
      reviewedDocuments: [request.docs.OWNERSHIP_DEED],
    });
    expectError(custodial, 409, "NOT_PASSKEY_CUSTODY");

    const opened = await ana.browser.post(`/console/requests/${request.id}/signing-requests`, body);
    expect(opened.status, JSON.stringify(opened.body)).to.equal(201);
    expect(opened.body).to.include({ kind: "DECISION", status: "COLLECTING", threshold: 2, requestId: request.id });
    expect(opened.body.account).to.equal(account);
    expect(opened.body.summary).to.include({ decision: "APPROVED", remarks: "Site plan conforms" });
    expect(digestOfTypedData(opened.body.typedData)).to.equal(opened.body.digest);
    // The remarks record's hash (canonical JSON, as docs/decisions.md gives it), so a reviewer's browser can check it.
    expect(opened.body.typedData.message.remarksHash).to.equal(
      keccak256(toUtf8Bytes('{"remarks":"Site plan conforms"}')),
    );
    expect(opened.body.summary.documents).to.deep.equal([
      { documentId: request.docs.SITE_PLAN, version: 1, sha256: request.hashes.SITE_PLAN },
    ]);
    const hoursLeft = (Date.parse(opened.body.expiresAt) - Date.now()) / 3_600_000;
    expect(hoursLeft, "time for N reviewers, within the chain's day").to.be.within(11.9, 12.1);
    approval = opened.body;

    const other = await ben.browser.post(`/console/requests/${request.id}/signing-requests`, {
      decision: "REJECTED",
      reason: "OTHER",
      remarks: "Opened to go stale",
    });
    expect(other.status, JSON.stringify(other.body)).to.equal(201);
    rejection = other.body;
  });

  it("keeps one signature collecting, and the chain refuses that signature relayed alone", async function () {
    const seen = await ana.browser.get(`/console/signing-requests/${approval.id}`);
    anaApproval = assertionFor(ana, seen.body, rp);
    const first = await ana.browser.post(`/console/signing-requests/${approval.id}/assertions`, {
      response: anaApproval,
    });
    expect(first.status, JSON.stringify(first.body)).to.equal(200);
    expect(first.body.status).to.equal("COLLECTING");
    expect(first.body.signatures).to.have.length(1);
    expect(first.body.transactionHash).to.equal(undefined);

    const alone = encodePasskeySignature([
      { key: ana.passkey.publicKey, assertion: accountAssertion(anaApproval, approval.digest) },
    ]);
    const onChain = new Contract(account, DepartmentPasskeyAccountAbi as never, driver.core.provider);
    expect(await onChain.isValidSignature(approval.digest, alone)).to.equal("0xffffffff");
    const { rows } = await driver.core.pool.query(`SELECT payload FROM signing_requests WHERE id = $1`, [approval.id]);
    const message = rows[0].payload.typedData.message;
    const relayed = driver.core.provider.call({
      to: current().deployment.contracts.ApprovalRegistry,
      data: registry.encodeFunctionData("decideBySig", [message, alone]),
    });
    const error = await relayed.then(
      () => undefined,
      (e) => e,
    );
    expect(error, "decideBySig with one of two signatures").to.not.equal(undefined);
    const revert = registry.parseError(error.data ?? error.info?.error?.data);
    expect(revert?.name).to.equal("ReviewInvalidSignature");
    expect(getAddress(revert!.args[1])).to.equal(account);

    const again = await ana.browser.post(`/console/signing-requests/${approval.id}/assertions`, {
      response: anaApproval,
    });
    expectError(again, 409, "ALREADY_SIGNED");
  });

  it("refuses, storing nothing, an assertion over another decision's digest, and a replayed assertion (400 PASSKEY_INVALID)", async function () {
    const seen = await ben.browser.get(`/console/signing-requests/${rejection.id}`);
    const overOther = await ben.browser.post(`/console/signing-requests/${approval.id}/assertions`, {
      response: assertionFor(ben, seen.body, rp),
    });
    expectError(overOther, 400, "PASSKEY_INVALID");
    const replayed = await ana.browser.post(`/console/signing-requests/${rejection.id}/assertions`, {
      response: anaApproval,
    });
    expectError(replayed, 400, "PASSKEY_INVALID");
    expect(await signatures(approval.id)).to.have.length(1);
    expect(await signatures(rejection.id)).to.have.length(0);
  });

  it("refuses, storing nothing, another origin or RP ID, or no user verification (400 PASSKEY_INVALID)", async function () {
    const seen = (await ben.browser.get(`/console/signing-requests/${approval.id}`)).body;
    for (const ceremony of [
      { ...rp, origin: "https://licences.evil.example" },
      { ...rp, rpId: "evil.example" },
      { ...rp, flags: 0x01 },
    ]) {
      const answer = await ben.browser.post(`/console/signing-requests/${approval.id}/assertions`, {
        response: assertionFor(ben, seen, ceremony),
      });
      expectError(answer, 400, "PASSKEY_INVALID");
    }
    expect(await signatures(approval.id)).to.have.length(1);
  });

  it("refuses, storing nothing, another reviewer's passkey, and a reviewer of another department (403)", async function () {
    const seen = (await ben.browser.get(`/console/signing-requests/${approval.id}`)).body;
    const cyOnBen = await ben.browser.post(`/console/signing-requests/${approval.id}/assertions`, {
      response: assertionFor(cy, { ...seen, allowCredentials: [] }, rp),
    });
    expect(cyOnBen.status).to.equal(403);
    expectError(await eve.browser.get(`/console/signing-requests/${approval.id}`), 404);
    const byEve = await eve.browser.post(`/console/signing-requests/${approval.id}/assertions`, {
      response: assertionFor(eve, { ...seen, allowCredentials: [] }, rp),
    });
    expect(byEve.status).to.equal(403);
    expect(await signatures(approval.id)).to.have.length(1);
  });

  it("refuses a removed passkey and a removed reviewer: their console sessions end (401), nothing stored", async function () {
    const seen = (await cy.browser.get(`/console/signing-requests/${approval.id}`)).body;
    expect(seen.allowCredentials).to.deep.equal([cy.passkey.id]);
    const asDept = departmentClient(api, passkeyDept);
    const removedKey = await asDept.delete(
      `/departments/${passkeyDept.code}/reviewers/${cy.reviewerId}/passkeys/${encodeURIComponent(cy.passkey.id)}`,
    );
    expect(removedKey.status, JSON.stringify(removedKey.body)).to.equal(204);
    const withRemovedKey = await cy.browser.post(`/console/signing-requests/${approval.id}/assertions`, {
      response: assertionFor(cy, seen, rp),
    });
    expect(withRemovedKey.status).to.equal(401);
    const removed = await asDept.delete(`/departments/${passkeyDept.code}/reviewers/${cy.reviewerId}`);
    expect(removed.status).to.equal(204);
    const afterRemoval = await cy.browser.post(`/console/signing-requests/${approval.id}/assertions`, {
      response: assertionFor(cy, seen, rp),
    });
    expect(afterRemoval.status).to.equal(401);
    expect(await signatures(approval.id)).to.have.length(1);
  });

  it("relays the decision at the second signature: the chain records the passkey account as the signer", async function () {
    const done = await sign(ben, approval, rp);
    expect(done.status, JSON.stringify(done.body)).to.equal(200);
    expect(done.body.status).to.equal("SUBMITTED");
    expect(done.body.signatures.map((s: { reviewerName: string }) => s.reviewerName)).to.deep.equal(["Ana", "Ben"]);
    expect(done.body.result).to.include({ status: "APPROVED", transactionHash: done.body.transactionHash });

    const receipt = await driver.core.provider.getTransactionReceipt(done.body.transactionHash);
    const topic = approvalRegistry.getEvent("DecisionRecorded")!.topicHash;
    const recorded = approvalRegistry.parseLog(receipt!.logs.find((l) => l.topics[0] === topic)!)!;
    expect(getAddress(recorded.args.signer)).to.equal(account);
    const tx = await driver.core.provider.getTransaction(done.body.transactionHash);
    expect(getAddress(tx!.from), "relayed by the operator").to.equal(getAddress(current().operatorAddress));

    const approvals = await departmentClient(api, keyDept).get(`/requests/${request.id}/approvals`);
    expect(approvals.status).to.equal(200);
  });

  it("fails a signing request gone stale with the decide use case's 409, and records it FAILED", async function () {
    await sign(ana, rejection, rp);
    const stale = await sign(ben, rejection, rp);
    expect(stale.status, JSON.stringify(stale.body)).to.equal(409);
    const seen = await ana.browser.get(`/console/signing-requests/${rejection.id}`);
    expect(seen.body.status).to.equal("FAILED");
    expect(seen.body.failure.code).to.equal(stale.body.code);
    expect(seen.body.signatures, "both signatures kept, for the record").to.have.length(2);
  });

  it("leaves API-key departments deciding as before", async function () {
    const approved = await departmentClient(api, keyDept).post(`/requests/${request.id}/approve`, {
      remarks: "Deed in order",
      reviewedDocuments: [request.docs.OWNERSHIP_DEED],
    });
    expect(approved.status, JSON.stringify(approved.body)).to.equal(200);
    expect(approved.body.workflowStatus.isComplete, "both departments approved").to.equal(true);

    // Public verification names who could sign each approval: the reviewers' passkeys, or the platform's key.
    const { tokenId } = (await departmentClient(api, keyDept).get(`/requests/${request.id}`)).body;
    const approvals: Json[] = await eventually("the licence verified with both approvals", async () => {
      const verified = await apiClient(api).get(`/verify/${tokenId}`);
      return verified.body.verdict === "VALID" && verified.body.approvals.length === 2
        ? verified.body.approvals
        : undefined;
    });
    const byCode = Object.fromEntries(
      approvals.map((a) => [
        a.departmentCode,
        { signedBy: a.signedBy, threshold: a.reviewerThreshold, signer: a.signer },
      ]),
    );
    expect(byCode[passkeyDept.code]).to.deep.equal({
      signedBy: "DEPARTMENT_REVIEWERS",
      threshold: 2,
      signer: account.toLowerCase(),
    });
    expect(byCode[keyDept.code]).to.include({ signedBy: "PLATFORM", threshold: null });
  });
  it("is verified by an auditor from the chain alone: both reviewers' assertions and the account's key proof (npm run audit)", async function () {
    const { tokenId } = (await departmentClient(api, keyDept).get(`/requests/${request.id}`)).body;
    const stack = current();
    const argv = ["scripts/audit.ts", "--rpc", stack.rpcUrl, "--deployment", stack.config.deploymentFile!];
    // Exit 1 when other files left platform findings on the shared chain (test/stack/audit.test.ts forces a wallet
    // change on purpose): none may name this licence, these departments or the account.
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [...argv, "--token", String(tokenId), "--expect-origin", rp.origin, "--json"],
      { cwd: REPO_ROOT, maxBuffer: 64 << 20, env: { PATH: process.env.PATH } },
    ).catch((error: { code?: number; stdout?: string }) => {
      if (error.code !== 1 || !error.stdout) throw error;
      return { stdout: error.stdout };
    });
    const report = JSON.parse(stdout);
    const [licence] = report.licences;
    expect(licence.findings).to.deep.equal([]);
    const ours = (report.findings as string[]).filter(
      (f) =>
        f.includes(passkeyDept.code) || f.includes(keyDept.code) || f.toLowerCase().includes(account.toLowerCase()),
    );
    expect(ours).to.deep.equal([]);
    const decision = licence.decisions.find((d: Json) => d.departmentCode === passkeyDept.code);
    expect(decision).to.include({ route: "RELAYED", walletMatches: true });
    expect(getAddress(decision.signer)).to.equal(account);
    expect(decision.passkeys).to.have.length(2);
    expect(decision.passkeys.every((p: Json) => p.verified && p.origin === rp.origin)).to.equal(true);
    const department = report.passkeyDepartments.find((d: Json) => d.departmentCode === passkeyDept.code);
    expect(department.reviewedCode).to.equal(true);
    expect(department.keyProofs[0].passkeys.every((p: Json) => p.verified)).to.equal(true);
  });
});
