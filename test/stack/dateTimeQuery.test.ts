import { expect } from "chai";
import { apiClient as http, expectError } from "./support/httpClient.ts";
import { adminSession } from "./support/sessions.ts";
import { current } from "./support/stackFixture.ts";

/** date-time query values are strict RFC 3339 (seconds required), and the document says so. */
describe("date-time query values", function () {
  let admin: ReturnType<typeof http>;
  before(async function () {
    ({ admin } = await adminSession());
  });

  for (const value of [
    "2020-02-29T00:00Z",
    "2020-02-29",
    "2021-02-29T00:00:00Z",
    "2020-02-29 00:00:00Z",
    "2020-02-29t00:00:00z",
    "2020-02-29T00:00:00+0100",
    "2020-02-29T00:00:60Z",
  ]) {
    it(`GET /admin/audit-logs refuses startDate=${value} with 400 VALIDATION_ERROR`, async function () {
      const response = await admin.get(`/admin/audit-logs?startDate=${encodeURIComponent(value)}`);
      expectError(response, 400, "VALIDATION_ERROR");
      expect(response.body.details.issues).to.deep.include({
        in: "query",
        path: "startDate",
        message: "must be an RFC 3339 date-time with seconds and an offset, e.g. 2020-02-29T00:00:00Z",
      });
    });
  }

  for (const value of ["2020-02-29T00:00:00Z", "2020-02-29T00:00:00.123Z", "2020-02-29T05:30:00+05:30"]) {
    it(`GET /admin/audit-logs accepts startDate=${value}`, async function () {
      expect((await admin.get(`/admin/audit-logs?startDate=${encodeURIComponent(value)}`)).status).to.equal(200);
    });
  }

  it("the document gives startDate format date-time and a pattern that refuses a value without seconds", async function () {
    const document = (await (await fetch(`${current().api.url}/api/v1/openapi.json`)).json()) as any;
    const startDate = document.paths["/api/v1/admin/audit-logs"].get.parameters.find(
      (p: any) => p.name === "startDate",
    );
    expect(startDate.schema.format).to.equal("date-time");
    const pattern = new RegExp(startDate.schema.pattern, "u");
    expect(pattern.test("2020-02-29T00:00Z")).to.equal(false);
    expect(pattern.test("2020-02-29T00:00:00Z")).to.equal(true);
  });
});
