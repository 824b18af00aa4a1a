import { readdir, readFile } from "node:fs/promises";
import net from "node:net";
import path from "node:path";
import { expect } from "chai";
import { z } from "zod/v4";
import { createApp } from "../../api/src/app.ts";
import { defineRoute } from "../../api/src/http/routeTable.ts";
import { createLogger } from "../../api/src/observability/logger.ts";
import { Metrics } from "../../api/src/observability/metrics.ts";
import { current } from "./support/stackFixture.ts";
import { createDriver, type Driver } from "./support/platformDriver.ts";

describe("API skeleton", function () {
  const url = (p: string) => `${current().api.url}${p}`;

  describe("errors have the spec's {code, message, details?} shape", function () {
    it("answers an unknown route with 404 NOT_FOUND", async function () {
      const response = await fetch(url("/api/v1/no-such-thing"));
      expect(response.status).to.equal(404);
      expect(await response.json()).to.deep.equal({
        code: "NOT_FOUND",
        message: "No route for GET /api/v1/no-such-thing",
      });
    });

    it("echoes a request id, or makes one", async function () {
      const given = await fetch(url("/health"), { headers: { "x-request-id": "trace-123" } });
      expect(given.headers.get("x-request-id")).to.equal("trace-123");
      const made = await fetch(url("/health"), { headers: { "x-request-id": "bad id with spaces" } });
      expect(made.headers.get("x-request-id")).to.match(/^[0-9a-f-]{36}$/);
    });
  });

  describe("routes declared with schemas (in-process app on the real database and chain)", function () {
    let driver: Driver;
    let server: net.Server;
    let base: string;
    before(async () => {
      driver = await createDriver(current());
      const routes = [
        defineRoute({
          method: "post",
          path: "/things/:thingId",
          operationId: "createThing",
          summary: "Create a thing",
          tags: ["Things"],
          access: [{ kind: "admin" }],
          params: z.object({ thingId: z.uuid() }),
          query: z.object({ dryRun: z.enum(["true", "false"]).optional() }),
          body: z.object({ name: z.string().min(1), size: z.int().min(1).max(10) }).meta({ id: "ThingInput" }),
          responses: {
            201: {
              description: "Created",
              schema: z.object({ id: z.string(), name: z.string() }).meta({ id: "Thing" }),
            },
          },
          handler: ({ params, body }) => ({ status: 201, body: { id: params.thingId, name: body.name } }),
        }),
        defineRoute({
          method: "get",
          path: "/boom",
          operationId: "boom",
          summary: "Fails",
          tags: ["Things"],
          access: [{ kind: "public" }],
          responses: { 200: { description: "never" } },
          handler: () => {
            throw new Error("secret internal detail: password=hunter2");
          },
        }),
      ];
      const app = createApp({
        ...driver.core,
        logger: createLogger("silent"),
        metrics: new Metrics(),
        publicBaseUrl: "http://127.0.0.1",
        maxIndexerLag: 5,
        routes,
        // The test's caller: an administrator when it says so, anonymous otherwise.
        authenticate: async (ctx) =>
          ctx.get("x-test-admin") ? { kind: "client", id: "test", scopes: ["admin"] } : undefined,
      });
      server = app.listen(0, "127.0.0.1");
      await new Promise((r) => server.once("listening", r));
      base = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
    });
    after(async () => {
      server.close();
      await driver.close();
    });

    it("parses a valid request and runs the handler", async function () {
      const id = "3f0c9d3e-8a4b-4c2d-9e1f-0a1b2c3d4e5f";
      const response = await fetch(`${base}/api/v1/things/${id}`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-test-admin": "1" },
        body: JSON.stringify({ name: "a", size: 3 }),
      });
      expect(response.status).to.equal(201);
      expect(await response.json()).to.deep.equal({ id, name: "a" });
    });

    it("refuses invalid params, query and body with 400 VALIDATION_ERROR naming each field", async function () {
      const anonymous = await fetch(`${base}/api/v1/things/not-a-uuid`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}",
      });
      expect(anonymous.status).to.equal(401);
      expect(await anonymous.json()).to.deep.equal({
        code: "UNAUTHORIZED",
        message: "Authentication is missing or invalid",
      });
      const response = await fetch(`${base}/api/v1/things/not-a-uuid?dryRun=maybe`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-test-admin": "1" },
        body: JSON.stringify({ name: "", size: 11 }),
      });
      expect(response.status).to.equal(400);
      const body = (await response.json()) as { code: string; details: { issues: { in: string; path: string }[] } };
      expect(body.code).to.equal("VALIDATION_ERROR");
      expect(body.details.issues.map((i) => `${i.in}:${i.path}`)).to.deep.equal(["path:thingId"]);
      const bodyErrors = await fetch(`${base}/api/v1/things/3f0c9d3e-8a4b-4c2d-9e1f-0a1b2c3d4e5f`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-test-admin": "1" },
        body: JSON.stringify({ name: "", size: 11 }),
      });
      const parsed = (await bodyErrors.json()) as { details: { issues: { in: string; path: string }[] } };
      expect(parsed.details.issues.map((i) => `${i.in}:${i.path}`)).to.deep.equal(["body:name", "body:size"]);
    });

    it("answers an unexpected failure with 500 INTERNAL_ERROR and no internals", async function () {
      const response = await fetch(`${base}/api/v1/boom`);
      expect(response.status).to.equal(500);
      expect(await response.json()).to.deep.equal({ code: "INTERNAL_ERROR", message: "An unexpected error occurred" });
    });

    it("generates the OpenAPI 3.1 document from the same schemas", async function () {
      const doc = (await (await fetch(`${base}/api/v1/openapi.json`)).json()) as any;
      expect(doc.openapi).to.equal("3.1.0");
      expect(doc.info.version).to.equal("1.0.0");
      const op = doc.paths["/api/v1/things/{thingId}"].post;
      expect(op.operationId).to.equal("createThing");
      expect(op.security).to.deep.equal([{ AdminAuth: ["admin"] }]);
      // An absent `required` is OpenAPI's default: false.
      expect(op.parameters.map((p: any) => [p.name, p.in, p.required ?? false])).to.deep.equal([
        ["thingId", "path", true],
        ["dryRun", "query", false],
        ["Idempotency-Key", "header", false],
      ]);
      expect(op.requestBody.content["application/json"].schema).to.deep.equal({
        $ref: "#/components/schemas/ThingInput",
      });
      expect(doc.components.schemas.ThingInput.required).to.deep.equal(["name", "size"]);
      expect(doc.components.schemas.Thing.properties).to.have.keys("id", "name");
      expect(doc.components.schemas.Error.required).to.deep.equal(["code", "message"]);
      expect(doc.paths["/api/v1/boom"].get.security).to.deep.equal([]);
    });
  });

  it("serves the OpenAPI document and a readable docs page", async function () {
    const doc = (await (await fetch(url("/api/v1/openapi.json"))).json()) as any;
    expect(doc.openapi).to.equal("3.1.0");
    expect(doc.components.securitySchemes).to.have.keys("BearerAuth", "ApiKeyAuth", "AdminAuth");
    // The decisions on every point the specification leaves open have a page of their own, linked from the document.
    expect(doc.info.description).to.include("/docs/decisions");
    expect(doc.components.schemas.RequestStatus.enum).to.include.members([
      "DRAFT",
      "PENDING_RESUBMISSION",
      "APPROVED",
      "EXPIRED",
    ]);
    expect(doc.components.schemas.ApprovalStatus.enum).to.deep.equal([
      "PENDING",
      "APPROVED",
      "REJECTED",
      "CHANGES_REQUESTED",
      "REVIEW_REQUIRED",
    ]);
    const page = await fetch(url("/docs"));
    expect(page.headers.get("content-type")).to.match(/text\/html/);
    expect(await page.text()).to.include("/api/v1/openapi.json");
    expect(await (await fetch(url("/docs/decisions"))).text()).to.include("Rejection is a veto");
  });

  it("reports health with each part's state", async function () {
    const response = await fetch(url("/health"));
    expect(response.status).to.equal(200);
    const body = (await response.json()) as any;
    expect(body.status).to.equal("ok");
    expect(body.checks.database.ok).to.equal(true);
    expect(body.checks.chain.blockNumber).to.be.a("number");
    expect(body.checks.indexer.lagBlocks).to.be.at.most(5);
  });

  it("exposes Prometheus metrics: latency by route, outbox by status, indexer lag", async function () {
    await fetch(url("/health"));
    const text = await (await fetch(url("/metrics"))).text();
    expect(text).to.match(/http_request_duration_seconds_bucket\{[^}]*route="\/health"/);
    expect(text).to.match(/outbox_transactions\{status="CONFIRMED"\} \d+/);
    expect(text).to.match(/indexer_lag_blocks \d+/);
  });

  it("never writes the stack's secrets into its logs", async function () {
    const dataDir = current().config.dataDir;
    const secrets = await Promise.all(
      ["master.key", "postgres.password"].map(async (f) =>
        (await readFile(path.join(dataDir, "secrets", f), "utf8")).trim(),
      ),
    );
    const logs = path.join(dataDir, "logs");
    for (const file of await readdir(logs)) {
      const text = await readFile(path.join(logs, file), "utf8");
      for (const secret of secrets) {
        expect(text.includes(secret.replace(/^0x/, "")), `${file} contains a secret`).to.equal(false);
      }
    }
  });
});
