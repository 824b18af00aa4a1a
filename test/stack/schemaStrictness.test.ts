/**
 * The document's schemas are as strict as the service: what a schema admits, the service accepts past
 * validation, and what the service refuses, the schema refuses too.
 */
import { expect } from "chai";
import { apiClient as http, expectError } from "./support/httpClient.ts";
import { loadOperations, type Operation } from "./support/openApiOperations.ts";
import { adminSession } from "./support/sessions.ts";
import { current } from "./support/stackFixture.ts";

type Json = Record<string, any>;

describe("schemas as strict as the service", function () {
  let operations: Operation[];
  let admin: ReturnType<typeof http>;
  const op = (id: string) => operations.find((o) => o.operationId === id)!;
  const api = () => current().api.url;

  before(async function () {
    ({ operations } = await loadOperations(api()));
    ({ admin } = await adminSession());
  });

  it("the document hash path parameter has the pattern the service applies", async function () {
    const schema = op("verifyDocument").pathParams.find((p) => p.name === "hash")!.schema;
    const pattern = new RegExp(schema.pattern, "u");
    const hex = "ab".repeat(32);
    for (const accepted of [hex, `0x${hex}`, `0X${hex.toUpperCase()}`]) {
      expect(pattern.test(accepted), accepted).to.equal(true);
      // Valid, and anchored nowhere: the service's verdict, not a 400.
      expect((await fetch(`${api()}/api/v1/verify/document/${accepted}`)).status, accepted).to.equal(404);
    }
    for (const refused of [hex.slice(2), `${hex}00`, `0x${hex.slice(1)}g`, "not-a-hash", `00${hex}`]) {
      expect(pattern.test(refused), refused).to.equal(false);
      const response = await fetch(`${api()}/api/v1/verify/document/${refused}`);
      expect(response.status, refused).to.equal(400);
      expect(((await response.json()) as Json).code).to.equal("VALIDATION_ERROR");
    }
  });

  it("the department PATCH body requires at least one field (minProperties 1), as the service does", async function () {
    expect(op("updateDepartment").body!.schema.minProperties).to.equal(1);
    const response = await admin.patch("/departments/NO_SUCH_DEPARTMENT", {});
    expectError(response, 400, "VALIDATION_ERROR");
    expect(response.body.message).to.match(/give at least one of/);
  });

  it("grant_type is an enum of the one grant each token endpoint supports; another is unsupported_grant_type", async function () {
    expect(op("issueClientToken").body!.schema.properties.grant_type.enum).to.deep.equal(["client_credentials"]);
    expect(op("identityLockerToken").body!.schema.properties.grant_type.enum).to.deep.equal(["authorization_code"]);
    const stack = current();
    const password = await fetch(`${api()}/api/v1/auth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "password",
        client_id: stack.admin.clientId,
        client_secret: stack.admin.clientSecret,
      }),
    });
    expect(password.status).to.equal(400);
    expect(((await password.json()) as Json).error).to.equal("unsupported_grant_type");
    const exchange = await fetch(`${api()}/api/v1/auth/identitylocker/token`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ grant_type: "client_credentials", code: "x", redirect_uri: "http://127.0.0.1:9/cb" }),
    });
    expect(exchange.status).to.equal(400);
    expect(((await exchange.json()) as Json).error).to.equal("unsupported_grant_type");
  });

  it("upload file fields are binary (format binary, contentMediaType)", function () {
    for (const id of ["uploadDocument", "updateDocument"]) {
      const body = op(id).body!;
      expect(body.contentType, id).to.equal("multipart/form-data");
      expect(body.schema.properties.file, id).to.include({
        type: "string",
        format: "binary",
        contentMediaType: "application/octet-stream",
      });
    }
  });
});
