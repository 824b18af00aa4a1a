/**
 * Values sent empty are refused and named, never taken for absent ones: an empty Idempotency-Key (its schema: 1 to
 * 255 visible characters) and the empty fields of the identity-locker code exchange (minLength 1 in the document).
 */
import http from "node:http";
import { expect } from "chai";
import { applicantToken } from "./support/authClient.ts";
import { current } from "./support/stackFixture.ts";

/** A request with exactly these headers (fetch may drop or refuse an empty header value; node:http sends it). */
function send(
  url: string,
  method: string,
  headers: Record<string, string>,
  body: string,
): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method, headers }, (response) => {
      let text = "";
      response.on("data", (chunk) => (text += chunk));
      response.on("end", () => resolve({ status: response.statusCode!, body: text ? JSON.parse(text) : undefined }));
    });
    request.on("error", reject);
    request.end(body);
  });
}

describe("empty values are refused, not taken for absent ones", function () {
  it("POST with an empty Idempotency-Key: 400 VALIDATION_ERROR naming the header, and nothing is done", async function () {
    const stack = current();
    const applicant = `empty-key-${Date.now()}`;
    const token = await applicantToken(stack.api.url, { id: applicant, name: "Empty Key" });
    const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
    const before = await send(`${stack.api.url}/api/v1/requests`, "GET", headers, "");
    const empty = await send(`${stack.api.url}/api/v1/requests`, "POST", { ...headers, "idempotency-key": "" }, "{}");
    expect(empty.status).to.equal(400);
    expect(empty.body).to.deep.equal({
      code: "VALIDATION_ERROR",
      message: "Invalid header: Idempotency-Key: must be 1-255 visible ASCII characters (it is empty)",
      details: {
        issues: [
          { in: "header", path: "Idempotency-Key", message: "must be 1-255 visible ASCII characters (it is empty)" },
        ],
      },
    });
    // Checked before the body: an otherwise valid body is not run either.
    const valid = await send(
      `${stack.api.url}/api/v1/requests`,
      "POST",
      { ...headers, "idempotency-key": "" },
      JSON.stringify({ requestType: "NOT_A_TYPE" }),
    );
    expect(valid.status).to.equal(400);
    expect(valid.body.details.issues[0].path).to.equal("Idempotency-Key");
    const after = await send(`${stack.api.url}/api/v1/requests`, "GET", headers, "");
    expect(after.body).to.deep.equal(before.body);
    // Without the header the same request is parsed as usual (the body's own error).
    const absent = await send(`${stack.api.url}/api/v1/requests`, "POST", headers, "{}");
    expect(absent.status).to.equal(400);
    expect(JSON.stringify(absent.body)).to.not.include("Idempotency-Key");
  });

  it("POST /auth/identitylocker/token names the fields sent empty; the document gives them minLength 1", async function () {
    const stack = current();
    const exchange = (body: Record<string, string>) =>
      send(
        `${stack.api.url}/api/v1/auth/identitylocker/token`,
        "POST",
        { "content-type": "application/json" },
        JSON.stringify(body),
      );
    expect(await exchange({ code: "", redirect_uri: "", client_id: "", code_verifier: "" })).to.deep.equal({
      status: 400,
      body: {
        error: "invalid_request",
        error_description: "code, redirect_uri, client_id and code_verifier are empty: send at least 1 character",
      },
    });
    expect(
      (await exchange({ code: "abc", redirect_uri: "https://portal.example/cb", client_id: "", code_verifier: "v" }))
        .body,
    ).to.deep.equal({ error: "invalid_request", error_description: "client_id is empty: send at least 1 character" });
    // A form says the same.
    const form = await send(
      `${stack.api.url}/api/v1/auth/identitylocker/token`,
      "POST",
      { "content-type": "application/x-www-form-urlencoded" },
      "code=&redirect_uri=https%3A%2F%2Fportal.example%2Fcb&client_id=c&code_verifier=v",
    );
    expect(form.body.error_description).to.equal("code is empty: send at least 1 character");
    // A field left out is still "required".
    expect((await exchange({ redirect_uri: "https://portal.example/cb" })).body.error_description).to.equal(
      "code is required",
    );
    const document = (await (await fetch(`${stack.api.url}/api/v1/openapi.json`)).json()) as {
      components: { schemas: Record<string, { properties: Record<string, { minLength?: number }> }> };
    };
    const properties = document.components.schemas.IdentityLockerTokenRequest.properties;
    for (const name of ["code", "redirect_uri", "client_id", "code_verifier"])
      expect(properties[name].minLength, name).to.equal(1);
  });
});
