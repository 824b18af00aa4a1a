import { expect } from "chai";
import type { departmentClient } from "./support/departmentClient.ts";
import type { Json } from "./support/httpClient.ts";
import { createDriver, type Driver } from "./support/platformDriver.ts";
import { pdf } from "./support/sampleFiles.ts";
import { seedWorkflow } from "./support/seedWorkflow.ts";
import { adminSession, applicantClient, departmentSession, letters, type Applicant } from "./support/sessions.ts";
import { current } from "./support/stackFixture.ts";
import { submittedRequest } from "./support/submittedRequest.ts";
import { stage, workflow } from "./support/workflowDefinition.ts";
import { expectError } from "./support/httpClient.ts";

/** GET /requests/pending: what waits for a department, paged like GET /requests and showing the same stage. */
describe("GET /requests/pending", function () {
  const run = `${Date.now() % 1e7}`;
  const tag = letters(run);
  const code = `PAGING_${tag}`;
  let driver: Driver;
  let as: ReturnType<typeof departmentClient>;
  let applicant: Applicant;
  const submitted: string[] = []; // oldest first

  before(async function () {
    const stack = current();
    driver = await createDriver(stack);
    const { api, adminToken } = await adminSession(stack);
    as = (await departmentSession(api, adminToken, { code, name: "Paging department" })).client;
    await seedWorkflow(
      stack,
      driver,
      workflow(
        "BUILDING_PERMIT",
        `Paging ${run}`,
        stage("intake", `Intake review ${run}`, "PARALLEL", { [code]: ["SITE_PLAN"] }),
      ),
    );
    applicant = await applicantClient(api, { id: `paging-${run}`, name: "Paula Paging" });
    for (let i = 0; i < 5; i++)
      submitted.push(
        (await submittedRequest(applicant, "BUILDING_PERMIT", { SITE_PLAN: pdf(`paging ${run} ${i}`) })).id,
      );
  });
  after(async () => driver?.close());

  const pending = (query: string) => as.get(`/requests/pending?department=${code}&${query}`);

  it("cuts the waiting requests into pages, newest first, each page naming the total", async function () {
    const whole = await pending("limit=100");
    expect(whole.status).to.equal(200);
    expect(whole.body.requests.map((r: Json) => r.requestId)).to.deep.equal([...submitted].reverse());
    expect(whole.body.pagination).to.deep.equal({ page: 1, limit: 100, total: 5, totalPages: 1 });

    const pages = [];
    for (const page of [1, 2, 3, 4]) {
      const answer = await pending(`limit=2&page=${page}`);
      expect(answer.status).to.equal(200);
      expect(answer.body.pagination).to.deep.equal({ page, limit: 2, total: 5, totalPages: 3 });
      pages.push(answer.body.requests as Json[]);
    }
    expect(pages.map((p) => p.length)).to.deep.equal([2, 2, 1, 0]);
    expect(pages.flat()).to.deep.equal(whole.body.requests);
  });

  it("refuses a page number past 10,000 (400 VALIDATION_ERROR), here and on GET /requests", async function () {
    expect((await pending("page=10000")).status).to.equal(200);
    for (const answer of [
      await pending("page=10001"),
      await pending("page=1000000000000000"),
      await applicant.get("/requests?page=1000000000000000"),
    ]) {
      expectError(answer, 400, "VALIDATION_ERROR");
      expect(answer.body.details.issues.map((i: Json) => i.path)).to.deep.equal(["page"]);
    }
  });

  it("names each request's current stage as GET /requests does", async function () {
    const fromPending = (await pending("limit=100")).body.requests.find((r: Json) => r.requestId === submitted[0]);
    expect(fromPending.currentStage).to.equal(`Intake review ${run}`);
    const listed = await as.get(`/requests?limit=100&sortBy=createdAt&sortOrder=desc`);
    expect(listed.status).to.equal(200);
    expect(listed.body.requests.find((r: Json) => r.requestId === submitted[0])).to.deep.equal(fromPending);
  });
});
