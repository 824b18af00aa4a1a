/**
 * Decisions sent at the same moment by every department of a PARALLEL stage: each is simulated before the others
 * are mined, so the one mined last completes the stage and issues the licence on a state it was not estimated on.
 * (Found by npm run bench: with a tight gas limit that last approval ran out of gas and reverted.)
 */
import { expect } from "chai";
import { applicantToken, clientToken } from "./support/authClient.ts";
import { createDepartment, departmentClient } from "./support/departmentClient.ts";
import { apiClient as http } from "./support/httpClient.ts";
import { createDriver, type Driver } from "./support/platformDriver.ts";
import { seedWorkflow } from "./support/seedWorkflow.ts";
import { current } from "./support/stackFixture.ts";

describe("concurrent decisions on one request (real stack)", function () {
  const run = `${Date.now() % 1e7}`;
  const tag = run.replace(/\d/g, (d) => "ABCDEFGHIJ"[Number(d)]);
  let driver: Driver;
  after(async () => driver?.close());

  it("every department of a PARALLEL stage approving at once: all succeed, the licence is issued", async function () {
    const stack = current();
    const api = stack.api.url;
    driver = await createDriver(stack);
    const admin = await clientToken(api, stack.admin.clientId, stack.admin.clientSecret, "admin");
    const departments = [];
    for (const letter of "ABCDEF")
      departments.push(
        departmentClient(
          api,
          await createDepartment(api, admin, { code: `TOGETHER_${letter}_${tag}`, name: `Together ${letter}` }),
        ),
      );
    await seedWorkflow(stack, driver, {
      workflowType: "BUILDING_PERMIT",
      name: "All at once",
      stages: [
        {
          stageId: "all",
          stageName: "All at once",
          stageOrder: 1,
          executionType: "PARALLEL",
          completionCriteria: "ALL",
          requiredApprovals: "ABCDEF".split("").map((letter) => ({
            departmentCode: `TOGETHER_${letter}_${tag}`,
            requiredDocuments: [],
            isMandatory: true,
          })),
        },
      ],
    });
    const applicant = http(api, await applicantToken(api, { id: `together-${run}`, name: "Tog Ether" }));
    for (let round = 0; round < 3; round++) {
      const created = await applicant.post("/requests", {
        applicantId: `together-${run}`,
        requestType: "BUILDING_PERMIT",
      });
      expect((await applicant.post(`/requests/${created.body.requestId}/submit`)).status).to.equal(200);
      const answers = await Promise.all(
        departments.map((d) =>
          d.post(`/requests/${created.body.requestId}/approve`, { remarks: "together", reviewedDocuments: [] }),
        ),
      );
      expect(
        answers.map((a) => a.status),
        JSON.stringify(answers.map((a) => a.body)),
      ).to.deep.equal([200, 200, 200, 200, 200, 200]);
      expect((await applicant.get(`/requests/${created.body.requestId}`)).body.status).to.equal("APPROVED");
    }
  });
});
