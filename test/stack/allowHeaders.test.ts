import { expect } from "chai";
import { current } from "./support/stackFixture.ts";

/** Allow tells which methods the path really has: the route table's most specific pattern, static over parameter. */
describe("Allow headers", function () {
  const url = (path: string) => `${current().api.url}${path}`;
  const allowOf = async (path: string) => {
    const response = await fetch(url(path), { method: "OPTIONS" });
    return {
      status: response.status,
      allow: (response.headers.get("allow") ?? "").split(/,\s*/).filter(Boolean).sort(),
    };
  };

  it("OPTIONS /webhooks/logs allows GET only (not DELETE /webhooks/{webhookId})", async function () {
    expect(await allowOf("/api/v1/webhooks/logs")).to.deep.equal({ status: 204, allow: ["GET", "HEAD", "OPTIONS"] });
  });

  it("OPTIONS /workflows/validate allows POST only (not GET, PUT, DELETE /workflows/{workflowId})", async function () {
    expect(await allowOf("/api/v1/workflows/validate")).to.deep.equal({ status: 204, allow: ["OPTIONS", "POST"] });
  });

  it("DELETE /webhooks/logs is 405 with the Error body and the true Allow, not a 400 of DELETE /webhooks/{webhookId}", async function () {
    const response = await fetch(url("/api/v1/webhooks/logs"), { method: "DELETE" });
    expect(response.status).to.equal(405);
    expect(response.headers.get("allow")).to.equal("GET, HEAD, OPTIONS");
    expect(await response.json()).to.deep.equal({
      code: "METHOD_NOT_ALLOWED",
      message: "DELETE is not allowed on /api/v1/webhooks/logs; allowed: GET, HEAD, OPTIONS",
    });
  });

  it("GET /workflows/validate is 405, not GET /workflows/{workflowId}", async function () {
    const response = await fetch(url("/api/v1/workflows/validate"));
    expect(response.status).to.equal(405);
    expect(response.headers.get("allow")).to.equal("POST, OPTIONS");
  });

  it("a path the router does not match with a method its pattern allows is 404, not a contradictory 405 (found by the fuzz test)", async function () {
    const response = await fetch(url("/api/v1/workflows//?="), { headers: { authorization: "Bearer x" } });
    expect(response.status).to.not.equal(405);
    expect(response.headers.get("allow")).to.equal(null);
  });

  it("a parameter path still allows its own methods", async function () {
    expect((await allowOf("/api/v1/webhooks/00000000-0000-4000-8000-000000000001")).allow).to.include("DELETE");
  });

  it("every path of the OpenAPI document allows exactly its documented methods (+HEAD with GET, +OPTIONS)", async function () {
    const document = (await (await fetch(url("/api/v1/openapi.json"))).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    const mismatches: string[] = [];
    for (const [template, operations] of Object.entries(document.paths)) {
      // A parameter value that is no static segment anywhere, so the path can only be the template's own.
      const path = template.replace(/\{[^}]+\}/g, "p0x1");
      const documented = Object.keys(operations).map((m) => m.toUpperCase());
      const expected = [...documented, ...(documented.includes("GET") ? ["HEAD"] : []), "OPTIONS"].sort();
      const actual = await allowOf(path);
      if (JSON.stringify(actual.allow) !== JSON.stringify(expected))
        mismatches.push(`${template}: Allow ${actual.allow.join(", ")}; documented ${expected.join(", ")}`);
    }
    expect(mismatches).to.deep.equal([]);
  });
});
