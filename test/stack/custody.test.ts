import { expect } from "chai";
import { type BaseWallet, TypedDataEncoder, Wallet, getAddress } from "ethers";
import { approvalRegistry } from "../../api/src/chain/contracts.ts";
import { DECISION_TYPES } from "../../abis/index.ts";
import {
  createDepartment,
  departmentClient,
  eoaKeySigner,
  keyProof,
  type CreatedTestDepartment,
} from "./support/departmentClient.ts";
import type { apiClient } from "./support/httpClient.ts";
import { createDriver, type Driver } from "./support/platformDriver.ts";
import { deploySafe, safeSignature } from "./support/safeWallet.ts";
import { pdf, png } from "./support/sampleFiles.ts";
import { seedWorkflow } from "./support/seedWorkflow.ts";
import { eventually } from "./support/eventually.ts";
import { adminSession, applicantClient, letters, type Applicant } from "./support/sessions.ts";
import { current } from "./support/stackFixture.ts";
import { submittedRequest } from "./support/submittedRequest.ts";
import { stage, workflow } from "./support/workflowDefinition.ts";
import { expectError } from "./support/httpClient.ts";

/**
 * Custody modes over HTTP on the real stack: a department that holds its own key decides by signing EIP-712 typed
 * data the platform relays (the chain checks the signature against the department's registered wallet); decisions
 * bind the document versions reviewed; a department's wallet changes only after a public delay.
 */
describe("custody modes and decisions bound to what was reviewed (HTTP, real stack)", function () {
  const run = `${Date.now() % 1e7}`;
  const tag = letters(run);
  const codes = { held: `HELD_${tag}`, custodial: `CUST_${tag}` };
  const heldKey = Wallet.createRandom();
  let api: string;
  let driver: Driver;
  let admin: ReturnType<typeof apiClient>;
  let adminToken: string;
  let applicant: Applicant;
  let held: CreatedTestDepartment;
  let custodial: CreatedTestDepartment;

  before(async function () {
    const stack = current();
    driver = await createDriver(stack);
    ({ api, adminToken, admin } = await adminSession(stack));
    held = await createDepartment(api, adminToken, {
      code: codes.held,
      name: "Department holding its key",
      custody: "DEPARTMENT_HELD",
      walletAddress: heldKey.address,
      keyHolder: eoaKeySigner(heldKey),
    });
    custodial = await createDepartment(api, adminToken, { code: codes.custodial, name: "Custodial department" });
    // BUILDING_PERMIT: other stack tests expect TRADE_LICENSE to have no workflow and count RESORT_LICENSE's versions.
    const own = stage("held", "Own key", "PARALLEL", {
      [codes.held]: ["SITE_PLAN"],
      [codes.custodial]: ["OWNERSHIP_DEED"],
    });
    await seedWorkflow(stack, driver, workflow("BUILDING_PERMIT", "Building permit (custody test)", own));
    applicant = await applicantClient(api, { id: `custody-${run}`, name: "Cora Custody" });
  });
  after(async () => driver?.close());

  const submitted = (label: string) =>
    submittedRequest(applicant, "BUILDING_PERMIT", {
      SITE_PLAN: pdf(`plan ${label} ${run}`),
      OWNERSHIP_DEED: png(`deed ${label} ${run}`),
    });

  /** The typed data the API hands out, signed with `key` (as any wallet would sign it). */
  async function signed(
    department: CreatedTestDepartment,
    requestId: string,
    body: Record<string, unknown>,
    key: BaseWallet = heldKey,
  ) {
    const response = await departmentClient(api, department).post(`/requests/${requestId}/decision-typed-data`, body);
    expect(response.status, JSON.stringify(response.body)).to.equal(200);
    const { typedData, nonce, deadline, stage, round } = response.body;
    const signature = await key.signTypedData(typedData.domain, DECISION_TYPES, typedData.message);
    return { signature, nonce, deadline, stage, round, typedData, documentVersions: response.body.documentVersions };
  }

  /** A wallet change to `key`, a wallet the department holds, with the key's proof that it holds it. */
  async function heldWalletChange(key: BaseWallet) {
    const change = { custody: "DEPARTMENT_HELD" as const, walletAddress: key.address };
    return { ...change, keyProof: await keyProof(api, adminToken, { code: codes.held, ...change }, eoaKeySigner(key)) };
  }

  async function decisionOf(transactionHash: string) {
    const receipt = await driver.core.provider.getTransactionReceipt(transactionHash);
    const log = receipt!.logs.find((l) => l.topics[0] === approvalRegistry.getEvent("DecisionRecorded")!.topicHash)!;
    const tx = await driver.core.provider.getTransaction(transactionHash);
    return { event: approvalRegistry.parseLog(log)!, from: tx!.from };
  }

  it("registers a department that holds its own key: its address on chain, custody DEPARTMENT_HELD, no key in the platform", async function () {
    expect(held.walletAddress).to.equal(heldKey.address);
    expect(held.body.custody).to.equal("DEPARTMENT_HELD");
    expect(custodial.body.custody).to.equal("CUSTODIAL");
    const listed = await admin.get(`/departments/${codes.held}`);
    expect(listed.body).to.include({
      custody: "DEPARTMENT_HELD",
      walletAddress: heldKey.address,
      pendingWalletChange: null,
    });
    const { rows } = await driver.core.pool.query(`SELECT 1 FROM wallets WHERE address = $1`, [
      heldKey.address.toLowerCase(),
    ]);
    expect(rows, "the platform holds no key of a department-held wallet").to.have.length(0);
    const refused = await admin.post("/departments", { code: `NOADDR_${tag}`, name: "x", custody: "DEPARTMENT_HELD" });
    expect(refused.status).to.equal(400);
  });

  it("relays a decision the department signed: the chain records its wallet as signer, the operator as sender", async function () {
    const { id, docs } = await submitted("signed");
    const asHeld = departmentClient(api, held);
    const unsigned = await asHeld.post(`/requests/${id}/approve`, {
      remarks: "Plan fine",
      reviewedDocuments: [docs.SITE_PLAN],
    });
    expectError(unsigned, 400, "SIGNATURE_REQUIRED");

    const body = { remarks: "Plan fine", reviewedDocuments: [docs.SITE_PLAN] };
    const proof = await signed(held, id, { decision: "APPROVED", ...body });
    expect(proof.typedData.domain).to.deep.include({
      name: "LicenceApprovalRegistry",
      version: "2",
      verifyingContract: current().deployment.contracts.ApprovalRegistry,
    });
    expect(proof.typedData.domain.salt).to.match(/^0x[0-9a-f]{64}$/);
    expect(proof.typedData.message.documents, "the reviewed document's SHA-256").to.deep.equal([
      (await admin.get(`/documents/${docs.SITE_PLAN}`)).body.currentHash,
    ]);
    expect(proof.documentVersions).to.deep.equal({ [docs.SITE_PLAN]: 1 });

    const wrongKey = await signed(held, id, { decision: "APPROVED", ...body }, Wallet.createRandom());
    const forged = await asHeld.post(`/requests/${id}/approve`, {
      ...body,
      signature: wrongKey.signature,
      nonce: wrongKey.nonce,
      deadline: wrongKey.deadline,
      stage: wrongKey.stage,
      round: wrongKey.round,
    });
    expectError(forged, 400, "INVALID_SIGNATURE");

    const tampered = await asHeld.post(`/requests/${id}/approve`, {
      ...body,
      remarks: "Something else",
      signature: proof.signature,
      nonce: proof.nonce,
      deadline: proof.deadline,
      stage: proof.stage,
      round: proof.round,
    });
    expect(tampered.status, "remarks other than those signed").to.equal(400);
    expect(tampered.body.code).to.equal("INVALID_SIGNATURE");

    const approved = await asHeld.post(`/requests/${id}/approve`, {
      ...body,
      signature: proof.signature,
      nonce: proof.nonce,
      deadline: proof.deadline,
      stage: proof.stage,
      round: proof.round,
    });
    expect(approved.status, JSON.stringify(approved.body)).to.equal(200);
    const { event, from } = await decisionOf(approved.body.transactionHash);
    expect(event.args.signer).to.equal(heldKey.address);
    expect(Number(event.args.custody)).to.equal(1);
    expect(from).to.equal(current().operatorAddress);

    const replayed = await asHeld.post(`/requests/${id}/approve`, {
      ...body,
      signature: proof.signature,
      nonce: proof.nonce,
      deadline: proof.deadline,
      stage: proof.stage,
      round: proof.round,
    });
    expectError(replayed, 409, "STALE_NONCE");

    const approvals = await admin.get(`/requests/${id}/approvals`);
    expect(
      approvals.body.approvals.filter((a: { departmentCode?: string; status: string }) => a.status === "APPROVED"),
    ).to.have.length(1);
  });

  it("refuses an expired signature with 400 SIGNATURE_EXPIRED and records nothing", async function () {
    const { id, docs } = await submitted("expired");
    const body = { remarks: "Late", reviewedDocuments: [docs.SITE_PLAN] };
    const proof = await signed(held, id, { decision: "APPROVED", ...body });
    const message = { ...proof.typedData.message, deadline: "1" };
    const signature = await heldKey.signTypedData(proof.typedData.domain, DECISION_TYPES, message);
    const before = await recordedTransactions();
    const expired = await departmentClient(api, held).post(`/requests/${id}/approve`, {
      ...body,
      signature,
      nonce: proof.nonce,
      deadline: 1,
      stage: proof.stage,
      round: proof.round,
    });
    expectError(expired, 400, "SIGNATURE_EXPIRED");
    expect(await recordedTransactions()).to.equal(before);
  });

  it("refuses a signature that is not whole bytes of hex with 400 VALIDATION_ERROR and records nothing", async function () {
    const { id, docs } = await submitted("odd-hex");
    const body = { remarks: "Odd", reviewedDocuments: [docs.SITE_PLAN] };
    const proof = await signed(held, id, { decision: "APPROVED", ...body });
    const before = await recordedTransactions();
    const answer = await departmentClient(api, held).post(`/requests/${id}/approve`, {
      ...body,
      signature: `${proof.signature}0`, // one hex digit too many
      nonce: proof.nonce,
      deadline: proof.deadline,
      stage: proof.stage,
      round: proof.round,
    });
    expectError(answer, 400, "VALIDATION_ERROR");
    expect(JSON.stringify(answer.body.details)).to.include("signature");
    expect(await recordedTransactions()).to.equal(before);
  });

  it("refuses, with 409 STALE_DOCUMENTS naming the document, an approval of a version that is no longer the latest", async function () {
    const { id, docs, hashes } = await submitted("stale");
    const updated = await applicant.upload(
      "PUT",
      `/requests/${id}/documents/${docs.OWNERSHIP_DEED}`,
      png(`deed v2 ${run}`, 2),
      "deed.png",
    );
    expect(updated.status, JSON.stringify(updated.body)).to.equal(200);
    const asCustodial = departmentClient(api, custodial);
    const stale = await asCustodial.post(`/requests/${id}/approve`, {
      remarks: "Deed fine",
      reviewedDocuments: [docs.OWNERSHIP_DEED],
      documentVersions: { [docs.OWNERSHIP_DEED]: 1 },
    });
    expectError(stale, 409, "STALE_DOCUMENTS");
    expect(stale.body.details.changedDocuments).to.deep.equal([
      { documentId: docs.OWNERSHIP_DEED, reviewedHash: hashes.OWNERSHIP_DEED, reviewedVersion: 1, latestVersion: 2 },
    ]);
    const fresh = await asCustodial.post(`/requests/${id}/approve`, {
      remarks: "Deed v2 fine",
      reviewedDocuments: [docs.OWNERSHIP_DEED],
      documentVersions: { [docs.OWNERSHIP_DEED]: 2 },
    });
    expect(fresh.status, JSON.stringify(fresh.body)).to.equal(200);
  });

  /** Chain transactions the platform has recorded (each decision it relays or sends is one). */
  async function recordedTransactions(): Promise<number> {
    return (await driver.core.pool.query(`SELECT count(*)::int AS n FROM chain_transactions`)).rows[0].n;
  }

  /** The department's decisions on the request, standing or not. */
  async function decisionsOf(requestId: string, code: string) {
    const listed = await admin.get(`/requests/${requestId}/approvals?includeInvalidated=true`);
    return listed.body.approvals.filter((a: { departmentCode: string }) => a.departmentCode === code);
  }

  /**
   * A department-held approval signed over `reviewedDocuments`, then a new version of `changed` uploaded before the
   * platform relays it (the department sends back the versions it signed, as the typed data's answer gives them):
   * 409 STALE_DOCUMENTS naming the document, nothing recorded anywhere, the nonce still unused.
   */
  async function staleSignedApproval(
    label: string,
    reviewed: "SITE_PLAN" | "ALL",
    changed: "SITE_PLAN" | "OWNERSHIP_DEED",
  ) {
    const { id, docs, hashes } = await submitted(label);
    const body = { remarks: `Reviewed (${label})`, reviewedDocuments: reviewed === "ALL" ? [] : [docs.SITE_PLAN] };
    const proof = await signed(held, id, { decision: "APPROVED", ...body });
    expect(proof.documentVersions[docs[changed]]).to.equal(1);
    const bytes = changed === "SITE_PLAN" ? pdf(`plan v2 ${label} ${run}`) : png(`deed v2 ${label} ${run}`, 2);
    const filename = changed === "SITE_PLAN" ? "plan.pdf" : "deed.png";
    const updated = await applicant.upload("PUT", `/requests/${id}/documents/${docs[changed]}`, bytes, filename);
    expect(updated.status, JSON.stringify(updated.body)).to.equal(200);

    const before = await recordedTransactions();
    const stale = await departmentClient(api, held).post(`/requests/${id}/approve`, {
      ...body,
      documentVersions: proof.documentVersions,
      signature: proof.signature,
      nonce: proof.nonce,
      deadline: proof.deadline,
      stage: proof.stage,
      round: proof.round,
    });
    expectError(stale, 409, "STALE_DOCUMENTS");
    expect(stale.body.details.changedDocuments).to.deep.equal([
      { documentId: docs[changed], reviewedHash: hashes[changed], reviewedVersion: 1, latestVersion: 2 },
    ]);
    expect(await recordedTransactions(), "no transaction recorded").to.equal(before);
    expect(await decisionsOf(id, codes.held), "no decision recorded").to.deep.equal([]);
    const again = await signed(held, id, { decision: "APPROVED", ...body });
    expect(again.nonce, "the signed nonce was not used on chain").to.equal(proof.nonce);
    expect(again.documentVersions[docs[changed]]).to.equal(2);
  }

  it("refuses, with 409 STALE_DOCUMENTS, a signed approval whose reviewed document changed before it was relayed; nothing recorded", async function () {
    await staleSignedApproval("signed stale", "SITE_PLAN", "SITE_PLAN");
  });

  it("refuses, with 409 STALE_DOCUMENTS, a signed approval covering every document when one changed before it was relayed", async function () {
    await staleSignedApproval("signed stale all", "ALL", "OWNERSHIP_DEED");
  });

  it("an approval naming no document covers every document: any update invalidates it", async function () {
    const { id, docs } = await submitted("all");
    const approved = await departmentClient(api, custodial).post(`/requests/${id}/approve`, {
      remarks: "All fine",
      reviewedDocuments: [],
    });
    expect(approved.status, JSON.stringify(approved.body)).to.equal(200);
    const { event } = await decisionOf(approved.body.transactionHash);
    expect(Number(event.args.reviewedMask)).to.equal(0b11);
    const updated = await applicant.upload(
      "PUT",
      `/requests/${id}/documents/${docs.SITE_PLAN}`,
      pdf(`plan v2 all ${run}`),
      "plan.pdf",
    );
    expect(updated.status).to.equal(200);
    const approvals = await admin.get(`/requests/${id}/approvals?includeInvalidated=true`);
    const custodialDecision = approvals.body.approvals.find((a: { departmentCode?: string; department?: string }) =>
      JSON.stringify(a).includes(codes.custodial),
    );
    expect(custodialDecision.status).to.equal("REVIEW_REQUIRED");
  });

  /** DepartmentWalletCancelled in the transaction's receipt: who cancelled, by the chain's account. */
  async function cancelledBy(transactionHash: string) {
    const receipt = await driver.core.provider.getTransactionReceipt(transactionHash);
    const topic = approvalRegistry.getEvent("DepartmentWalletCancelled")!.topicHash;
    return approvalRegistry.parseLog(receipt!.logs.find((l) => l.topics[0] === topic)!)!.args.by as string;
  }

  it("lets a custodial department refuse a change of its own wallet: the platform sends the cancel from the department's wallet", async function () {
    const proposed = await admin.post(`/departments/${codes.custodial}/wallet-change`, { custody: "CUSTODIAL" });
    expect(proposed.status, JSON.stringify(proposed.body)).to.equal(200);
    const byOther = await departmentClient(api, held).post(`/departments/${codes.custodial}/wallet-change/refuse`);
    expect(byOther.status, "another department").to.equal(403);
    expect(byOther.body.code).to.equal("FORBIDDEN");

    const refused = await departmentClient(api, custodial).post(`/departments/${codes.custodial}/wallet-change/refuse`);
    expect(refused.status, JSON.stringify(refused.body)).to.equal(200);
    expect(refused.body).to.include({ walletAddress: custodial.walletAddress, pendingWalletChange: null });
    expect(await cancelledBy(refused.body.transactionHash), "cancelled by the department's own wallet").to.equal(
      custodial.walletAddress,
    );
    const again = await departmentClient(api, custodial).post(`/departments/${codes.custodial}/wallet-change/refuse`);
    expectError(again, 409, "NO_WALLET_CHANGE");
  });

  it("answers a department holding its own key with the transaction to send itself (409 OWN_TRANSACTION_REQUIRED), which cancels the change", async function () {
    const proposed = await admin.post(
      `/departments/${codes.held}/wallet-change`,
      await heldWalletChange(Wallet.createRandom()),
    );
    expect(proposed.status, JSON.stringify(proposed.body)).to.equal(200);
    const before = await recordedTransactions();
    const answer = await departmentClient(api, held).post(`/departments/${codes.held}/wallet-change/refuse`);
    expectError(answer, 409, "OWN_TRANSACTION_REQUIRED");
    expect(await recordedTransactions(), "the platform sent nothing").to.equal(before);
    const { transaction } = answer.body.details;
    expect(transaction).to.include({
      from: heldKey.address,
      to: current().deployment.contracts.ApprovalRegistry,
      chainId: Number((await driver.core.provider.getNetwork()).chainId),
    });

    // The department sends it from its own wallet.
    await driver.core.provider.send("anvil_setBalance", [heldKey.address, "0x3635c9adc5dea00000"]);
    const sent = await heldKey
      .connect(driver.core.provider)
      .sendTransaction({ to: transaction.to, data: transaction.data, chainId: transaction.chainId });
    expect((await sent.wait())?.status).to.equal(1);
    expect(await cancelledBy(sent.hash)).to.equal(heldKey.address);
    await eventually("the index to forget the pending change", async () => {
      const listed = await admin.get(`/departments/${codes.held}`);
      return listed.body.pendingWalletChange === null ? listed.body : undefined;
    });
  });

  it("changes a department's wallet only after its public delay: the proposed key cannot decide before, the old one cannot after", async function () {
    const { id, docs } = await submitted("rotation");
    const newKey = Wallet.createRandom();
    const proposed = await admin.post(`/departments/${codes.held}/wallet-change`, await heldWalletChange(newKey));
    expect(proposed.status, JSON.stringify(proposed.body)).to.equal(200);
    expect(proposed.body.walletAddress).to.equal(heldKey.address);
    expect(proposed.body.pendingWalletChange).to.include({ walletAddress: newKey.address, custody: "DEPARTMENT_HELD" });
    expectError(await admin.post(`/departments/${codes.held}/wallet-change/activate`), 409, "WALLET_CHANGE_NOT_DUE");

    // Inside the delay, the proposed key's signature is not the department's.
    const body = { remarks: "Plan fine", reviewedDocuments: [docs.SITE_PLAN] };
    const tooSoon = await signed(held, id, { decision: "APPROVED", ...body }, newKey);
    const refused = await departmentClient(api, held).post(`/requests/${id}/approve`, {
      ...body,
      signature: tooSoon.signature,
      nonce: tooSoon.nonce,
      deadline: tooSoon.deadline,
      stage: tooSoon.stage,
      round: tooSoon.round,
    });
    expectError(refused, 400, "INVALID_SIGNATURE");

    const effectiveAt = Date.parse(proposed.body.pendingWalletChange.effectiveAt);
    await new Promise((r) => setTimeout(r, Math.max(0, effectiveAt - Date.now()) + 1500));
    const activated = await admin.post(`/departments/${codes.held}/wallet-change/activate`);
    expect(activated.status, JSON.stringify(activated.body)).to.equal(200);
    expect(activated.body).to.include({ walletAddress: newKey.address, pendingWalletChange: null });

    const oldKey = await signed(held, id, { decision: "APPROVED", ...body }, heldKey);
    const stale = await departmentClient(api, held).post(`/requests/${id}/approve`, {
      ...body,
      signature: oldKey.signature,
      nonce: oldKey.nonce,
      deadline: oldKey.deadline,
      stage: oldKey.stage,
      round: oldKey.round,
    });
    expect(stale.body.code, "the old key no longer speaks for the department").to.equal("INVALID_SIGNATURE");
    const current_ = await signed(held, id, { decision: "APPROVED", ...body }, newKey);
    const ok = await departmentClient(api, held).post(`/requests/${id}/approve`, {
      ...body,
      signature: current_.signature,
      nonce: current_.nonce,
      deadline: current_.deadline,
      stage: current_.stage,
      round: current_.round,
    });
    expect(ok.status, JSON.stringify(ok.body)).to.equal(200);
    expect((await decisionOf(ok.body.transactionHash)).event.args.signer).to.equal(newKey.address);
  });

  it("lets an administrator cancel a proposed wallet change, which the chain then forgets", async function () {
    const proposed = await admin.post(`/departments/${codes.custodial}/wallet-change`, { custody: "CUSTODIAL" });
    expect(proposed.status, JSON.stringify(proposed.body)).to.equal(200);
    expect(proposed.body.pendingWalletChange.custody).to.equal("CUSTODIAL");
    const cancelled = await admin.post(`/departments/${codes.custodial}/wallet-change/cancel`);
    expect(cancelled.status, JSON.stringify(cancelled.body)).to.equal(200);
    expect(cancelled.body.pendingWalletChange).to.equal(null);
    expect(cancelled.body.walletAddress).to.equal(custodial.walletAddress);
    expectError(await admin.post(`/departments/${codes.custodial}/wallet-change/cancel`), 409, "NO_WALLET_CHANGE");
  });

  // Last in this file: it registers a new version of the workflow, with the Safe's department alone.
  describe("a department whose wallet is a Safe (EIP-1271, 2 of 3 owners)", function () {
    const owners = [Wallet.createRandom(), Wallet.createRandom(), Wallet.createRandom()];
    const safeCode = `SAFE_${tag}`;
    let safe: string;
    let safeDepartment: CreatedTestDepartment;

    before(async function () {
      const stack = current();
      safe = await deploySafe(
        driver.core.provider,
        owners.map((o) => o.address),
        2,
      );
      safeDepartment = await createDepartment(api, adminToken, {
        code: safeCode,
        name: "Department deciding through a Safe",
        custody: "DEPARTMENT_HELD",
        walletAddress: safe,
        // The Safe proves it holds its key as it decides: two owners sign, the Safe answers EIP-1271.
        keyHolder: async ({ domain, types, message }) => {
          const digest = TypedDataEncoder.hash(domain, { DepartmentKey: types.DepartmentKey }, message);
          return safeSignature(safe, domain.chainId, digest, [owners[0], owners[1]]);
        },
      });
      const safeStage = stage("safe", "Safe", "PARALLEL", { [safeCode]: ["SITE_PLAN", "OWNERSHIP_DEED"] });
      await seedWorkflow(stack, driver, workflow("BUILDING_PERMIT", "Building permit (Safe custody test)", safeStage));
    });

    /** The typed data from the API, its EIP-712 digest, and the given owners' Safe signature of it. */
    async function signedBy(requestId: string, body: Record<string, unknown>, signers: BaseWallet[]) {
      const response = await departmentClient(api, safeDepartment).post(`/requests/${requestId}/decision-typed-data`, {
        decision: "APPROVED",
        ...body,
      });
      expect(response.status, JSON.stringify(response.body)).to.equal(200);
      expect(getAddress(response.body.signer), "the Safe is the signer the contract expects").to.equal(safe);
      expect(response.body.custody).to.equal("DEPARTMENT_HELD");
      const { typedData, nonce, deadline, stage, round } = response.body;
      const digest = TypedDataEncoder.hash(typedData.domain, DECISION_TYPES, typedData.message);
      const signature = await safeSignature(safe, typedData.domain.chainId, digest, signers);
      return { ...body, signature, nonce, deadline, stage, round };
    }

    it("registers the Safe's address as the department's wallet, and the Safe (two owners) decides over HTTP", async function () {
      expect(safeDepartment.body).to.include({ custody: "DEPARTMENT_HELD", walletAddress: safe });
      const { id, docs } = await submitted("safe");
      const body = { remarks: "Plan checked by two of three", reviewedDocuments: [docs.SITE_PLAN] };
      const approved = await departmentClient(api, safeDepartment).post(
        `/requests/${id}/approve`,
        await signedBy(id, body, [owners[2], owners[0]]),
      );
      expect(approved.status, JSON.stringify(approved.body)).to.equal(200);
      expect(approved.body.workflowStatus.isComplete, "its approval completes the only stage").to.equal(true);
      const { event, from } = await decisionOf(approved.body.transactionHash);
      expect(event.args.signer, "the Safe is the signer on chain").to.equal(safe);
      expect(Number(event.args.custody)).to.equal(1);
      expect(from, "relayed by the operator").to.equal(current().operatorAddress);
      const decisions = await decisionsOf(id, safeCode);
      expect(decisions.map((d: { status: string }) => d.status)).to.deep.equal(["APPROVED"]);
      expect(decisions[0].transactionHash).to.equal(approved.body.transactionHash);
    });

    it("refuses one owner's signature, or one by a stranger with an owner, with 400 INVALID_SIGNATURE: nothing recorded", async function () {
      const { id, docs } = await submitted("safe refused");
      const body = { remarks: "Plan checked", reviewedDocuments: [docs.SITE_PLAN] };
      const before = await recordedTransactions();
      for (const [what, signers] of [
        ["one owner of a 2-of-3 Safe", [owners[1]]],
        ["an owner and a stranger", [owners[1], Wallet.createRandom()]],
      ] as const) {
        const refused = await departmentClient(api, safeDepartment).post(
          `/requests/${id}/approve`,
          await signedBy(id, body, [...signers]),
        );
        expect(refused.status, what).to.equal(400);
        expect(refused.body.code, what).to.equal("INVALID_SIGNATURE");
        expect(refused.body.message, what).to.be.a("string");
      }
      expect(await recordedTransactions(), "no transaction recorded").to.equal(before);
      expect(await decisionsOf(id, safeCode), "no decision recorded").to.deep.equal([]);
      const request = await admin.get(`/requests/${id}`);
      expect(request.body.status).to.equal("SUBMITTED");
    });
  });
});
