/**
 * What a department-held signature can no longer be used for, over HTTP on the real stack: a signature is bound to
 * the department's nonce (any later decision of the department voids it), to the stage and round it was given for,
 * to the SHA-256 of the document versions reviewed, and to this deployment (the EIP-712 domain's salt). Each
 * refusal records nothing.
 */
import { expect } from "chai";
import { Interface, TypedDataEncoder, Wallet } from "ethers";
import { ApprovalRegistryAbi, DECISION_TYPES } from "../../abis/index.ts";
import {
  createDepartment,
  departmentClient,
  eoaKeySigner,
  type CreatedTestDepartment,
} from "./support/departmentClient.ts";
import { createDriver, type Driver } from "./support/platformDriver.ts";
import { pdf } from "./support/sampleFiles.ts";
import { seedWorkflow } from "./support/seedWorkflow.ts";
import { adminSession, applicantClient, letters, type Applicant } from "./support/sessions.ts";
import { current } from "./support/stackFixture.ts";
import { submittedRequest } from "./support/submittedRequest.ts";
import { stage, workflow } from "./support/workflowDefinition.ts";
import { expectError } from "./support/httpClient.ts";

const registry = new Interface(ApprovalRegistryAbi as never);

describe("signed decisions are bound to nonce, stage and round, documents and deployment (HTTP, real stack)", function () {
  const run = `${Date.now() % 1e7}`;
  const tag = letters(run);
  const codes = { held: `BOUND_HELD_${tag}`, first: `BOUND_FIRST_${tag}` };
  const heldKey = Wallet.createRandom();
  let api: string;
  let driver: Driver;
  let applicant: Applicant;
  let held: CreatedTestDepartment;
  let first: CreatedTestDepartment;

  before(async function () {
    const stack = current();
    driver = await createDriver(stack);
    let adminToken: string;
    ({ api, adminToken } = await adminSession(stack));
    held = await createDepartment(api, adminToken, {
      code: codes.held,
      name: "Department holding its key (bound signatures)",
      custody: "DEPARTMENT_HELD",
      walletAddress: heldKey.address,
      keyHolder: eoaKeySigner(heldKey),
    });
    first = await createDepartment(api, adminToken, { code: codes.first, name: "Custodial department (bound)" });
    // Stage 1: either department completes it (ANY); stage 2: the department holding its key alone.
    const plan = { [codes.first]: ["SITE_PLAN"], [codes.held]: ["SITE_PLAN"] };
    await seedWorkflow(
      stack,
      driver,
      workflow(
        "BUILDING_PERMIT",
        "Building permit (bound signatures test)",
        stage("first", "First look", "PARALLEL", plan, { completionCriteria: "ANY", optional: Object.keys(plan) }),
        stage("second", "Second look", "PARALLEL", { [codes.held]: ["SITE_PLAN"] }),
      ),
    );
    applicant = await applicantClient(api, { id: `bound-${run}`, name: "Bea Bound" });
  });
  after(async () => driver?.close());

  async function submitted(label: string) {
    const { id, docs, hashes } = await submittedRequest(applicant, "BUILDING_PERMIT", {
      SITE_PLAN: pdf(`plan ${label} ${run}`),
    });
    return { id, plan: docs.SITE_PLAN, planHash: hashes.SITE_PLAN };
  }

  /** The held department's signature of the typed data the API hands out now, as the decision body to relay. */
  async function signedApproval(requestId: string, remarks: string, reviewedDocuments: string[]) {
    const body = { remarks, reviewedDocuments };
    const response = await departmentClient(api, held).post(`/requests/${requestId}/decision-typed-data`, {
      decision: "APPROVED",
      ...body,
    });
    expect(response.status, JSON.stringify(response.body)).to.equal(200);
    const { typedData, nonce, deadline, stage, round, documentVersions } = response.body;
    const signature = await heldKey.signTypedData(typedData.domain, DECISION_TYPES, typedData.message);
    return { typedData, relay: { ...body, documentVersions, signature, nonce, deadline, stage, round } };
  }

  const relay = (requestId: string, body: Record<string, unknown>) =>
    departmentClient(api, held).post(`/requests/${requestId}/approve`, body);

  const recordedTransactions = async () =>
    (await driver.core.pool.query(`SELECT count(*)::int AS n FROM chain_transactions`)).rows[0].n as number;

  it("refuses a held-back signature relayed after another decision of the department (409 STALE_NONCE)", async function () {
    const one = await submitted("nonce one");
    const two = await submitted("nonce two");
    const heldBack = await signedApproval(one.id, "Held back", [one.plan]);
    const meanwhile = await signedApproval(two.id, "Decided meanwhile", [two.plan]);
    expect(meanwhile.relay.nonce, "both signed with the department's next nonce").to.equal(heldBack.relay.nonce);
    const recorded = await relay(two.id, meanwhile.relay);
    expect(recorded.status, JSON.stringify(recorded.body)).to.equal(200);

    const before = await recordedTransactions();
    expectError(await relay(one.id, heldBack.relay), 409, "STALE_NONCE");
    expect(await recordedTransactions(), "nothing recorded").to.equal(before);
  });

  it("refuses a signature given for stage 1 relayed once the request is in stage 2 (409 STALE_DECISION)", async function () {
    const request = await submitted("round");
    const forFirstStage = await signedApproval(request.id, "Stage one, held back", [request.plan]);
    expect(forFirstStage.relay.stage).to.equal(0);
    // The custodial department completes the first stage (ANY): the held department is now asked in the second.
    const completed = await departmentClient(api, first).post(`/requests/${request.id}/approve`, {
      remarks: "Fine",
      reviewedDocuments: [request.plan],
    });
    expect(completed.status, JSON.stringify(completed.body)).to.equal(200);
    expect(completed.body.workflowStatus.currentStage).to.equal("Second look");

    const before = await recordedTransactions();
    const refused = await relay(request.id, forFirstStage.relay);
    expectError(refused, 409, "STALE_DECISION");
    expect(refused.body.details).to.deep.include({ error: "ReviewWrongRound" });
    expect(await recordedTransactions(), "nothing recorded").to.equal(before);

    // Signed anew for the second stage, the same department's approval is recorded and issues the licence.
    const forSecondStage = await signedApproval(request.id, "Stage two", [request.plan]);
    expect(forSecondStage.relay.stage).to.equal(1);
    const recorded = await relay(request.id, forSecondStage.relay);
    expect(recorded.status, JSON.stringify(recorded.body)).to.equal(200);
    expect(recorded.body.workflowStatus.isComplete).to.equal(true);
  });

  it("refuses a signature over document hash A once version 2 is anchored (409 STALE_DOCUMENTS naming A)", async function () {
    const request = await submitted("hash");
    const overA = await signedApproval(request.id, "Reviewed version 1", [request.plan]);
    expect(overA.typedData.message.documents, "the typed data names version 1 by its SHA-256").to.deep.equal([
      request.planHash,
    ]);
    const replaced = await applicant.upload(
      "PUT",
      `/requests/${request.id}/documents/${request.plan}`,
      pdf(`plan v2 hash ${run}`),
      "p2.pdf",
    );
    expect(replaced.status, JSON.stringify(replaced.body)).to.equal(200);

    const before = await recordedTransactions();
    const refused = await relay(request.id, overA.relay);
    expectError(refused, 409, "STALE_DOCUMENTS");
    expect(refused.body.details.changedDocuments).to.deep.equal([
      { documentId: request.plan, reviewedHash: request.planHash, reviewedVersion: 1, latestVersion: 2 },
    ]);
    expect(await recordedTransactions(), "nothing recorded").to.equal(before);
  });

  it("records concurrent decisions of one custodial department: each takes the department's next nonce in turn", async function () {
    const requests = await Promise.all(["one", "two", "three"].map((label) => submitted(`together ${label}`)));
    const answers = await Promise.all(
      requests.map((r) =>
        departmentClient(api, first).post(`/requests/${r.id}/approve`, {
          remarks: "Fine",
          reviewedDocuments: [r.plan],
        }),
      ),
    );
    expect(answers.map((a) => a.status)).to.deep.equal([200, 200, 200], JSON.stringify(answers.map((a) => a.body)));
    const nonces = await Promise.all(
      answers.map(async (a) => {
        const tx = await driver.core.provider.getTransaction(a.body.transactionHash);
        return Number(registry.decodeFunctionData("decide", tx!.data)[0].nonce);
      }),
    );
    const sorted = [...nonces].sort((a, b) => a - b);
    expect(sorted, "consecutive decision nonces").to.deep.equal([sorted[0], sorted[0] + 1, sorted[0] + 2]);
  });

  it("hands out typed data in this deployment's EIP-712 domain: its salt, as the registry's eip712Domain() gives it", async function () {
    const request = await submitted("domain");
    const { typedData } = await signedApproval(request.id, "Domain", [request.plan]);
    const [fields, name, version, chainId, verifyingContract, salt] = registry.decodeFunctionResult(
      "eip712Domain",
      await driver.core.provider.call({
        to: driver.addresses.ApprovalRegistry,
        data: registry.encodeFunctionData("eip712Domain", []),
      }),
    );
    expect(fields).to.equal("0x1f"); // name, version, chainId, verifyingContract, salt
    expect(salt).to.not.equal(`0x${"00".repeat(32)}`);
    expect(typedData.domain).to.deep.equal({
      name,
      version,
      chainId: Number(chainId),
      verifyingContract,
      salt,
    });
    expect(typedData.types.EIP712Domain.map((f: { name: string }) => f.name)).to.deep.equal([
      "name",
      "version",
      "chainId",
      "verifyingContract",
      "salt",
    ]);
    // The same decision under a domain without the salt is another digest: a signature from elsewhere is not this one.
    const { salt: _salt, ...unsalted } = typedData.domain;
    expect(TypedDataEncoder.hash(unsalted, DECISION_TYPES, typedData.message)).to.not.equal(
      TypedDataEncoder.hash(typedData.domain, DECISION_TYPES, typedData.message),
    );
  });
});
