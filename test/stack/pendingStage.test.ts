import { expect } from "chai";
import { applicantToken, clientToken } from "./support/authClient.ts";
import { createDepartment, departmentClient } from "./support/departmentClient.ts";
import { apiClient as http, type Json } from "./support/httpClient.ts";
import { createDriver, type Driver } from "./support/platformDriver.ts";
import { pdf } from "./support/sampleFiles.ts";
import { seedWorkflow } from "./support/seedWorkflow.ts";
import { current } from "./support/stackFixture.ts";

/** GET /requests/pending shows the request's current stage, the same as GET /requests (issue 17). */
describe("GET /requests/pending: currentStage", function () {
  const run = `${Date.now() % 1e7}`;
  const tag = run.replace(/\d/g, (d) => "ABCDEFGHIJ"[Number(d)]);
  const code = `STAGE_${tag}`;
  let driver: Driver;

  before(async function () {
    driver = await createDriver(current());
  });
  after(async () => driver?.close());

  it("is the name of the stage the request is in, as GET /requests shows it", async function () {
    const stack = current();
    const api = stack.api.url;
    const adminToken = await clientToken(api, stack.admin.clientId, stack.admin.clientSecret, "admin");
    const department = await createDepartment(api, adminToken, { code, name: "Stage department" });
    await seedWorkflow(stack, driver, {
      workflowType: "BUILDING_PERMIT",
      name: `Trade licence (pending stage ${run})`,
      stages: [
        {
          stageId: "intake",
          stageName: `Intake review ${run}`,
          stageOrder: 1,
          executionType: "PARALLEL",
          completionCriteria: "ALL",
          requiredApprovals: [{ departmentCode: code, requiredDocuments: ["SITE_PLAN"], isMandatory: true }],
        },
      ],
    });
    const applicant = http(api, await applicantToken(api, { id: `stage-${run}`, name: "Stella Stage" }));
    const created = await applicant.post("/requests", { applicantId: `stage-${run}`, requestType: "BUILDING_PERMIT" });
    expect(created.status).to.equal(201);
    const id = created.body.requestId as string;
    expect(
      (
        await applicant.upload("POST", `/requests/${id}/documents`, pdf(`plan ${run}`), "plan.pdf", {
          docType: "SITE_PLAN",
        })
      ).status,
    ).to.equal(201);
    expect((await applicant.post(`/requests/${id}/submit`)).status).to.equal(200);

    const as = departmentClient(api, department);
    const pending = await as.get(`/requests/pending?department=${code}`);
    expect(pending.status).to.equal(200);
    const fromPending = pending.body.requests.find((r: Json) => r.requestId === id);
    expect(fromPending, "the submitted request is pending for the department").to.not.equal(undefined);
    expect(fromPending.currentStage).to.equal(`Intake review ${run}`);

    const listed = await as.get(`/requests?limit=100&sortBy=createdAt&sortOrder=desc`);
    expect(listed.status).to.equal(200);
    const fromList = listed.body.requests.find((r: Json) => r.requestId === id);
    expect(fromList).to.deep.equal(fromPending);
  });
});
