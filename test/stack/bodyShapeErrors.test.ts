import { expect } from "chai";
import { clientToken } from "./support/authClient.ts";
import { current } from "./support/stackFixture.ts";

/**
 * A JSON body that parses but is not an object is told apart from one that does not parse, and the OAuth token
 * endpoints answer both in their RFC 6749 §5.2 shape; the form-only token endpoint says to send a form.
 */
describe("request bodies that are not JSON objects", function () {
  const send = (path: string, body: string, headers: Record<string, string> = {}) =>
    fetch(`${current().api.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body,
    });

  const notObjects: [string, string][] = [
    ["42", "a number"],
    ['"code"', "a string"],
    ["null", "null"],
    ["true", "true"],
  ];

  describe("POST /auth/identitylocker/token (JSON or form)", function () {
    const path = "/api/v1/auth/identitylocker/token";
    for (const [text, kind] of notObjects) {
      it(`answers the JSON value ${text} with 400 invalid_request saying it is ${kind}, not an object`, async function () {
        const response = await send(path, text);
        expect(response.status).to.equal(400);
        expect(response.headers.get("cache-control")).to.equal("no-store");
        expect(await response.json()).to.deep.equal({
          error: "invalid_request",
          error_description: `The request body is valid JSON but ${kind}: it must be a JSON object`,
        });
      });
    }

    it("answers malformed JSON with 400 invalid_request saying it is not valid JSON", async function () {
      const response = await send(path, "{not json");
      expect(response.status).to.equal(400);
      expect(await response.json()).to.deep.equal({
        error: "invalid_request",
        error_description: "The request body is not valid JSON",
      });
    });
  });

  describe("POST /auth/token (form-encoded only)", function () {
    const formOnly = {
      error: "invalid_request",
      error_description: "The body must be application/x-www-form-urlencoded",
    };
    for (const [text] of [
      ...notObjects,
      ["{not json"],
      ['{"grant_type": "client_credentials"}'],
      ['{"__proto__": {}}'],
    ])
      it(`answers the JSON body ${text} with 400 invalid_request saying the body must be form-encoded`, async function () {
        const response = await send("/api/v1/auth/token", text);
        expect(response.status).to.equal(400);
        expect(response.headers.get("cache-control")).to.equal("no-store");
        expect(await response.json()).to.deep.equal(formOnly);
      });
  });

  it("POST /auth/identitylocker/token answers a JSON array with invalid_request saying it is an array", async function () {
    const response = await send("/api/v1/auth/identitylocker/token", '["code", "redirect_uri"]');
    expect(response.status).to.equal(400);
    expect(await response.json()).to.deep.equal({
      error: "invalid_request",
      error_description: "The request body is valid JSON but an array: it must be a JSON object",
    });
  });

  describe("other JSON routes", function () {
    let admin: Record<string, string>;
    before(async function () {
      const stack = current();
      admin = {
        authorization: `Bearer ${await clientToken(stack.api.url, stack.admin.clientId, stack.admin.clientSecret, "admin")}`,
      };
    });

    for (const [text, kind] of notObjects) {
      it(`POST /departments answers the JSON value ${text} with 400 VALIDATION_ERROR saying it is ${kind}`, async function () {
        const response = await send("/api/v1/departments", text, admin);
        expect(response.status).to.equal(400);
        const message = `The request body is valid JSON but ${kind}: it must be a JSON object`;
        expect(await response.json()).to.deep.equal({
          code: "VALIDATION_ERROR",
          message,
          details: { issues: [{ in: "body", path: "", message: `expected a JSON object, got ${kind}` }] },
        });
      });
    }

    it("POST /departments answers a JSON array with 400 VALIDATION_ERROR saying an object was expected", async function () {
      const response = await send("/api/v1/departments", "[]", admin);
      expect(response.status).to.equal(400);
      const body = await response.json();
      expect(body.code).to.equal("VALIDATION_ERROR");
      expect(body.message).to.match(/expected object, received array/);
    });

    it('POST /departments answers a body with a "__proto__" key with 400 FORBIDDEN_PROPERTY, and creates nothing', async function () {
      const before = await (await fetch(`${current().api.url}/api/v1/departments`, { headers: admin })).json();
      const response = await send(
        "/api/v1/departments",
        '{"code": "PROTO", "name": "Proto", "__proto__": {"isAdmin": true}}',
        admin,
      );
      expect(response.status).to.equal(400);
      expect(await response.json()).to.deep.equal({
        code: "FORBIDDEN_PROPERTY",
        message:
          'The request body has a "__proto__" key: refused, as it would set the prototype of the object it is parsed into',
      });
      const after = await (await fetch(`${current().api.url}/api/v1/departments`, { headers: admin })).json();
      expect(after).to.deep.equal(before);
    });
  });
});
