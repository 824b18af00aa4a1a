/**
 * Decisions sent at the same moment by every department of a PARALLEL stage: each is simulated before the others
 * are mined, so the one mined last completes the stage and issues the licence on a state it was not estimated on.
 * (Found by npm run bench: with a tight gas limit that last approval ran out of gas and reverted.)
 */
import { expect } from "chai";
import { departmentClient } from "./support/departmentClient.ts";
import { startApiProcess, type ExtraApi } from "./support/extraApi.ts";
import { createDriver, type Driver } from "./support/platformDriver.ts";
import { seedWorkflow } from "./support/seedWorkflow.ts";
import { adminSession, applicantClient, departmentSession, letters } from "./support/sessions.ts";
import { current } from "./support/stackFixture.ts";
import { submittedRequest } from "./support/submittedRequest.ts";
import { stage, workflow } from "./support/workflowDefinition.ts";

describe("concurrent writes (real stack)", function () {
  const run = `${Date.now() % 1e7}`;
  const tag = letters(run);
  let driver: Driver;
  let second: ExtraApi | undefined;
  after(async () => {
    await second?.stop();
    await driver?.close();
  });

  it("every department of a PARALLEL stage approving at once: all succeed, the licence is issued", async function () {
    const stack = current();
    driver = await createDriver(stack);
    const { api, adminToken } = await adminSession(stack);
    const departments = [];
    for (const letter of "ABCDEF")
      departments.push(
        await departmentSession(api, adminToken, { code: `TOGETHER_${letter}_${tag}`, name: `Together ${letter}` }),
      );
    const noDocuments = Object.fromEntries(departments.map((d) => [d.code, []]));
    await seedWorkflow(
      stack,
      driver,
      workflow("BUILDING_PERMIT", "All at once", stage("all", "All at once", "PARALLEL", noDocuments)),
    );
    const applicant = await applicantClient(api, { id: `together-${run}`, name: "Tog Ether" });
    for (let round = 0; round < 3; round++) {
      const created = await submittedRequest(applicant, "BUILDING_PERMIT", {});
      const answers = await Promise.all(
        departments.map((d) =>
          d.client.post(`/requests/${created.id}/approve`, { remarks: "together", reviewedDocuments: [] }),
        ),
      );
      expect(
        answers.map((a) => a.status),
        JSON.stringify(answers.map((a) => a.body)),
      ).to.deep.equal([200, 200, 200, 200, 200, 200]);
      expect((await applicant.get(`/requests/${created.id}`)).body.status).to.equal("APPROVED");
    }
  });

  it("one custodial department deciding on many requests at once through two API processes: every decision is mined, none reverts", async function () {
    const stack = current();
    driver ??= await createDriver(stack);
    const { api, adminToken } = await adminSession(stack);
    const department = await departmentSession(api, adminToken, { code: `BUSY_${tag}`, name: "Busy" });
    await seedWorkflow(
      stack,
      driver,
      workflow("BUILDING_PERMIT", "One busy", stage("busy", "Busy", "SEQUENTIAL", { [department.code]: [] })),
    );
    const applicant = await applicantClient(api, { id: `busy-${run}`, name: "Bu Sy" });
    const requests = [];
    for (let i = 0; i < 8; i++) requests.push(await submittedRequest(applicant, "BUILDING_PERMIT", {}));
    second = await startApiProcess("api-second", {});
    const clients = [department.client, departmentClient(second.url, department)];

    const answers = await Promise.all(
      requests.map((r, i) =>
        clients[i % 2].post(`/requests/${r.id}/approve`, { remarks: "busy", reviewedDocuments: [] }),
      ),
    );
    expect(
      answers.map((a) => a.status),
      JSON.stringify(answers.map((a) => a.body)),
    ).to.deep.equal(new Array(8).fill(200));
    const { rows } = await driver.core.pool.query(
      `SELECT status FROM chain_transactions WHERE kind = 'APPROVAL' AND request_id = ANY($1)`,
      [requests.map((r) => r.id)],
    );
    // No decision lost its nonce to another (the chain would have refused it: FAILED).
    expect(rows.map((r) => r.status)).to.deep.equal(new Array(8).fill("CONFIRMED"));
    for (const r of requests) expect((await applicant.get(`/requests/${r.id}`)).body.status).to.equal("APPROVED");
  });

  it("one custodial department deciding on 16 requests in quick succession while the chain mines a block a second: each is simulated on the block it was read at (not on the pool holding the others), all are mined", async function () {
    const stack = current();
    driver ??= await createDriver(stack);
    const { api, adminToken } = await adminSession(stack);
    const department = await departmentSession(api, adminToken, { code: `PACED_${tag}`, name: "Paced" });
    await seedWorkflow(
      stack,
      driver,
      workflow("BUILDING_PERMIT", "One paced", stage("paced", "Paced", "SEQUENTIAL", { [department.code]: [] })),
    );
    const applicant = await applicantClient(api, { id: `paced-${run}`, name: "Pa Ced" });
    const requests = [];
    for (let i = 0; i < 16; i++) requests.push(await submittedRequest(applicant, "BUILDING_PERMIT", {}));
    const { provider } = driver.core;
    // As on Besu: transactions wait in the pool for the next block, so the node's pending state runs ahead of its
    // latest block by this department's decisions in flight.
    await provider.send("evm_setAutomine", [false]);
    await provider.send("evm_setIntervalMining", [1]);
    let answers;
    try {
      // One every 100 ms: most are made while earlier ones of the department wait in the pool for their block.
      answers = await Promise.all(
        requests.map(async (r, i) => {
          await new Promise((resolve) => setTimeout(resolve, i * 100));
          return department.client.post(`/requests/${r.id}/approve`, { remarks: "paced", reviewedDocuments: [] });
        }),
      );
    } finally {
      await provider.send("evm_setIntervalMining", [0]);
      await provider.send("evm_setAutomine", [true]);
    }
    expect(
      answers.map((a) => a.status),
      JSON.stringify(answers.map((a) => a.body)),
    ).to.deep.equal(new Array(16).fill(200));
    const { rows } = await driver.core.pool.query(
      `SELECT status, block_number FROM chain_transactions WHERE kind = 'APPROVAL' AND request_id = ANY($1)`,
      [requests.map((r) => r.id)],
    );
    expect(rows.map((r) => r.status)).to.deep.equal(new Array(16).fill("CONFIRMED"));
    // Pipelined: one department's decisions share blocks instead of one each.
    expect(new Set(rows.map((r) => r.block_number)).size).to.be.below(16);
  });

  it("the same cancel sent twice at once: one cancels, the other is refused as a second cancel is (409 INVALID_STATE); one transaction, one audit row", async function () {
    const stack = current();
    driver ??= await createDriver(stack);
    const { api } = await adminSession(stack);
    const applicant = await applicantClient(api, { id: `twice-${run}`, name: "Twi Ce" });
    const created = await applicant.post("/requests", { applicantId: applicant.id, requestType: "BUILDING_PERMIT" });
    const id = created.body.requestId as string;
    const answers = await Promise.all([0, 1].map(() => applicant.post(`/requests/${id}/cancel`, { reason: "twice" })));
    expect(answers.map((a) => a.status).sort()).to.deep.equal([200, 409]);
    expect(answers.find((a) => a.status === 409)!.body.code).to.equal("INVALID_STATE");
    const { rows } = await driver.core.pool.query(
      `SELECT status FROM chain_transactions WHERE kind = 'CANCEL' AND request_id = $1`,
      [id],
    );
    expect(rows.map((r) => r.status)).to.deep.equal(["CONFIRMED"]);
    const audit = await driver.core.pool.query(
      `SELECT count(*)::int AS n FROM audit_logs WHERE entity_id = $1 AND action = 'CANCEL'`,
      [id],
    );
    expect(audit.rows[0].n).to.equal(1);
  });
});
