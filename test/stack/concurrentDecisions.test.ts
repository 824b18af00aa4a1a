/**
 * Decisions sent at the same moment by every department of a PARALLEL stage: each is simulated before the others
 * are mined, so the one mined last completes the stage and issues the licence on a state it was not estimated on.
 * (Found by npm run bench: with a tight gas limit that last approval ran out of gas and reverted.)
 */
import { expect } from "chai";
import { createDriver, type Driver } from "./support/platformDriver.ts";
import { seedWorkflow } from "./support/seedWorkflow.ts";
import { adminSession, applicantClient, departmentSession, letters } from "./support/sessions.ts";
import { current } from "./support/stackFixture.ts";
import { submittedRequest } from "./support/submittedRequest.ts";
import { stage, workflow } from "./support/workflowDefinition.ts";

describe("concurrent decisions on one request (real stack)", function () {
  const run = `${Date.now() % 1e7}`;
  const tag = letters(run);
  let driver: Driver;
  after(async () => driver?.close());

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
});
