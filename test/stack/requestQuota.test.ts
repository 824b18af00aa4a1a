import { expect } from "chai";
import type { ApiHandle } from "../../scripts/stack/stack.ts";
import { applicantToken } from "./support/authClient.ts";
import { apiClient as client } from "./support/httpClient.ts";
import { createDriver, type Driver } from "./support/platformDriver.ts";
import { seedWorkflow } from "./support/seedWorkflow.ts";
import { adminSession } from "./support/sessions.ts";
import { current } from "./support/stackFixture.ts";
import { stage, workflow } from "./support/workflowDefinition.ts";

describe("POST /requests: the per-applicant request quota holds under concurrency", function () {
  const run = `${Date.now() % 1e7}`;
  const applicantId = `quota-${run}`;
  const QUOTA = 50;
  const ATTEMPTS = 80;
  let driver: Driver;
  let quotaApi: ApiHandle;
  let workflowId: string | undefined;

  before(async function () {
    const stack = current();
    driver = await createDriver(stack);
    ({
      workflow: { id: workflowId },
    } = await seedWorkflow(
      stack,
      driver,
      workflow(
        "TRADE_LICENSE",
        `Trade licence (quota ${run})`,
        stage("check", "Check", "SEQUENTIAL", { [`QUOTA_${run}`]: ["SITE_PLAN"] }),
      ),
    ));
    // An API beside the fixture's (same database and chain) with a quota of 50 requests per applicant a day.
    quotaApi = await stack.startExtraApi(undefined, { REQUEST_QUOTA_PER_DAY: String(QUOTA) });
  });
  after(async () => {
    await quotaApi?.stop();
    // Other files expect TRADE_LICENSE to have no active workflow: deactivate the one this file registered.
    if (workflowId) {
      const { admin } = await adminSession();
      expect((await admin.delete(`/workflows/${workflowId}`)).status).to.equal(200);
    }
    await driver?.close();
  });

  it("80 parallel creations against a quota of 50 create exactly 50 and record exactly 50 mints; the rest are 429 QUOTA_EXCEEDED", async function () {
    this.timeout(600_000);
    const since = (await driver.core.pool.query(`SELECT now() AS t`)).rows[0].t as Date;
    const applicant = client(quotaApi.url, await applicantToken(current().api.url, { id: applicantId, name: "Quinn" }));
    const answers = await Promise.all(
      Array.from({ length: ATTEMPTS }, () =>
        applicant.post("/requests", { applicantId, requestType: "TRADE_LICENSE" }),
      ),
    );
    const statuses = answers.map((a) => a.status);
    expect(
      statuses.filter((s) => s === 201),
      JSON.stringify(answers.find((a) => a.status !== 201 && a.status !== 429)?.body),
    ).to.have.length(QUOTA);
    expect(statuses.filter((s) => s === 429)).to.have.length(ATTEMPTS - QUOTA);
    for (const refused of answers.filter((a) => a.status === 429))
      expect(refused.body).to.deep.include({ code: "QUOTA_EXCEEDED", details: { quota: QUOTA, windowHours: 24 } });

    const { rows } = await driver.core.pool.query(
      `SELECT (SELECT count(*)::int FROM requests WHERE applicant_id = $1) AS requests,
              (SELECT count(*)::int FROM chain_transactions WHERE kind = 'MINT_NFT' AND created_at >= $2) AS mints`,
      [applicantId, since],
    );
    expect(rows[0]).to.deep.equal({ requests: QUOTA, mints: QUOTA });
  });
});
