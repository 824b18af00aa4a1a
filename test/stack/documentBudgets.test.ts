/**
 * Document uploads on the real stack: the budgets of versions and bytes (exact under parallel uploads, checked on an
 * API process started with small budgets), what is refused before the body is read (the request's status, a spent
 * budget), and what a refused duplicate tells about the request that holds the same bytes.
 */
import http from "node:http";
import { readdir } from "node:fs/promises";
import path from "node:path";
import { expect } from "chai";
import type { ApiHandle } from "../../scripts/stack/stack.ts";
import { applicantToken } from "./support/authClient.ts";
import { createDepartment } from "./support/departmentClient.ts";
import { apiClient, type HttpResult } from "./support/httpClient.ts";
import { createDriver, type Driver } from "./support/platformDriver.ts";
import { png } from "./support/sampleFiles.ts";
import { seedWorkflow } from "./support/seedWorkflow.ts";
import { adminSession, letters } from "./support/sessions.ts";
import { current } from "./support/stackFixture.ts";
import { stage, workflow } from "./support/workflowDefinition.ts";

describe("document uploads: budgets, and refusals before the body is read", function () {
  const run = `${Date.now() % 1e7}`;
  const tag = letters(run);
  const docTypes = Array.from({ length: 8 }, (_, i) => `BUDGET_DOC_${"ABCDEFGH"[i]}`);
  /** A PNG of about `bytes` bytes (a text chunk pads it), distinct for each `note`. */
  const file = (note: string, bytes = 200) => png(`${note} ${run} `.padEnd(bytes, "."));
  const BIG = 20_000;
  // Small budgets on their own API process: 2 versions per document; per applicant and 24 hours 3 versions and
  // 50,000 bytes (two BIG files fit, a third does not).
  const budgets = {
    DOCUMENT_VERSIONS_PER_DOCUMENT: "2",
    DOCUMENT_VERSIONS_PER_DAY: "3",
    DOCUMENT_BYTES_PER_DAY: "50000",
  };
  let limited: ApiHandle;
  let driver: Driver;
  const boundary = "----budget-boundary";

  before(async function () {
    const stack = current();
    driver = await createDriver(stack);
    const code = `BUDGETS_${tag}`;
    await createDepartment(stack.api.url, (await adminSession(stack)).adminToken, { code, name: "Budgets" });
    await seedWorkflow(
      stack,
      driver,
      workflow("BUILDING_PERMIT", `Budgets ${run}`, stage("b", "B", "PARALLEL", { [code]: docTypes })),
    );
    limited = await stack.startExtraApi(undefined, budgets);
  });
  after(async () => {
    await limited?.stop();
    await driver?.close();
  });

  /** A new applicant (signed in on `api`) with one new request. */
  async function applicantWithRequest(name: string, api = limited.url) {
    const applicantId = `${name}-${run}`;
    const token = await applicantToken(api, { id: applicantId, name });
    const client = apiClient(api, token);
    const created = await client.post("/requests", { applicantId, requestType: "BUILDING_PERMIT" });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    return { client, token, requestId: created.body.requestId as string };
  }

  const count = async (sql: string, requestId: string) =>
    (await driver.core.pool.query(sql, [requestId])).rows[0].n as number;
  /** What the request holds: document rows, version rows, outbox records of anchorings, stored files. */
  async function holdings(requestId: string) {
    const files = await readdir(path.join(current().config.dataDir, "files", "documents", requestId), {
      recursive: true,
      withFileTypes: true,
    }).catch(() => []);
    return {
      documents: await count(`SELECT count(*)::int AS n FROM documents WHERE request_id = $1`, requestId),
      versions: await count(
        `SELECT count(*)::int AS n FROM document_versions v JOIN documents d ON d.id = v.document_id WHERE d.request_id = $1`,
        requestId,
      ),
      anchorings: await count(
        `SELECT count(*)::int AS n FROM chain_transactions WHERE request_id = $1 AND kind = 'DOC_UPDATE'`,
        requestId,
      ),
      files: files.filter((entry) => entry.isFile()).length,
    };
  }
  const tempUploads = async () =>
    (await readdir(path.join(current().config.dataDir, "tmp", "uploads")).catch(() => [] as string[])).filter((n) =>
      n.startsWith("upload-"),
    );

  /**
   * A chunked multipart upload whose body never ends: the form's fields and the start of a file, then nothing. Only
   * an API that decides before reading the body answers it; the answer must come within `withinMs`.
   */
  function endlessUpload(
    api: string,
    method: "POST" | "PUT",
    token: string,
    target: string,
    fields: Record<string, string>,
    withinMs = 15_000,
  ): Promise<HttpResult> {
    const url = new URL(`${api}/api/v1${target}`);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        request.destroy();
        reject(new Error(`no answer within ${withinMs} ms while the body was still being sent`));
      }, withinMs);
      const request = http.request({
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method,
        headers: {
          authorization: `Bearer ${token}`,
          "content-type": `multipart/form-data; boundary=${boundary}`,
          "transfer-encoding": "chunked",
        },
      });
      request.on("response", (response) => {
        let text = "";
        response.on("data", (chunk) => (text += chunk));
        response.on("end", () => {
          clearTimeout(timer);
          request.destroy();
          resolve({
            status: response.statusCode!,
            headers: new Headers(response.headers as Record<string, string>),
            body: text ? JSON.parse(text) : {},
          });
        });
      });
      request.on("error", () => {}); // after the answer the API may close the connection on us
      const parts = Object.entries(fields).map(
        ([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`,
      );
      request.write(
        `${parts.join("")}--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="late.png"\r\nContent-Type: image/png\r\n\r\n`,
      );
      request.write(file("endless").subarray(0, 64)); // and never the rest
    });
  }

  it("stores exactly DOCUMENT_VERSIONS_PER_DAY of parallel uploads; the others are 429 DOCUMENT_BUDGET_EXCEEDED and leave nothing", async function () {
    const { client, requestId } = await applicantWithRequest("parallel");
    const answers = await Promise.all(
      docTypes.map((docType) =>
        client.upload("POST", `/requests/${requestId}/documents`, file(docType), `${docType}.png`, { docType }),
      ),
    );
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses, JSON.stringify(answers.map((a) => a.body))).to.deep.equal([
      201, 201, 201, 429, 429, 429, 429, 429,
    ]);
    for (const refused of answers.filter((a) => a.status === 429)) {
      expect(refused.body.code).to.equal("DOCUMENT_BUDGET_EXCEEDED");
      expect(refused.body.details).to.include({ budget: "VERSIONS_PER_DAY", limit: 3, windowHours: 24 });
      expect(Number(refused.headers.get("retry-after"))).to.be.within(1, 24 * 3600);
    }
    expect(await holdings(requestId)).to.deep.equal({ documents: 3, versions: 3, anchorings: 3, files: 3 });
    await new Promise((r) => setTimeout(r, 200));
    expect(await tempUploads()).to.deep.equal([]);
  });

  it("refuses an upload once the daily budget is spent before reading its body, yet replays a retry of the last one that fit", async function () {
    const { client, token, requestId } = await applicantWithRequest("spent");
    const target = `/requests/${requestId}/documents`;
    const upload = (docType: string, key: string) =>
      client.upload("POST", target, file(`spent ${docType}`), "a.png", { docType }, "image/png", {
        "idempotency-key": key,
      });
    for (const docType of docTypes.slice(0, 3)) {
      const uploaded = await upload(docType, `spent-${docType}-${run}`);
      expect(uploaded.status, JSON.stringify(uploaded.body)).to.equal(201);
    }
    const refused = await endlessUpload(limited.url, "POST", token, target, { docType: docTypes[3] });
    expect(refused.status).to.equal(429);
    expect(refused.body).to.deep.include({ code: "DOCUMENT_BUDGET_EXCEEDED" });
    expect(refused.body.details).to.include({ budget: "VERSIONS_PER_DAY", limit: 3, used: 3 });
    // The upload that spent the budget, sent again under its key (its answer was lost): the same answer, not a 429.
    const retried = await upload(docTypes[2], `spent-${docTypes[2]}-${run}`);
    expect(retried.status, JSON.stringify(retried.body)).to.equal(201);
    expect(retried.headers.get("idempotent-replayed")).to.equal("true");
    expect(await holdings(requestId)).to.deep.equal({ documents: 3, versions: 3, anchorings: 3, files: 3 });
  });

  it("stores parallel uploads up to DOCUMENT_BYTES_PER_DAY; the one that does not fit is 429 naming the bytes budget", async function () {
    const { client, requestId } = await applicantWithRequest("bytes");
    const answers = await Promise.all(
      docTypes
        .slice(0, 3)
        .map((docType) =>
          client.upload("POST", `/requests/${requestId}/documents`, file(docType, BIG), `${docType}.png`, { docType }),
        ),
    );
    expect(answers.map((a) => a.status).sort(), JSON.stringify(answers.map((a) => a.body))).to.deep.equal([
      201, 201, 429,
    ]);
    const refused = answers.find((a) => a.status === 429)!;
    expect(refused.body.code).to.equal("DOCUMENT_BUDGET_EXCEEDED");
    expect(refused.body.details).to.include({ budget: "BYTES_PER_DAY", limit: 50_000 });
    expect(refused.body.details.used).to.be.within(2 * BIG, 2 * BIG + 1000);
    expect(await holdings(requestId)).to.deep.equal({ documents: 2, versions: 2, anchorings: 2, files: 2 });
  });

  it("refuses a version past DOCUMENT_VERSIONS_PER_DOCUMENT with 409 DOCUMENT_BUDGET_EXCEEDED before reading its body", async function () {
    const { client, token, requestId } = await applicantWithRequest("versions");
    const first = await client.upload("POST", `/requests/${requestId}/documents`, file("v1"), "v1.png", {
      docType: docTypes[0],
    });
    expect(first.status, JSON.stringify(first.body)).to.equal(201);
    const target = `/requests/${requestId}/documents/${first.body.documentId}`;
    const second = await client.upload("PUT", target, file("v2"), "v2.png");
    expect(second.status, JSON.stringify(second.body)).to.equal(200);
    const third = await endlessUpload(limited.url, "PUT", token, target, {});
    expect(third.status).to.equal(409);
    expect(third.body).to.deep.equal({
      code: "DOCUMENT_BUDGET_EXCEEDED",
      message: "A document may have at most 2 versions",
      details: { budget: "VERSIONS_PER_DOCUMENT", limit: 2 },
    });
    expect(await holdings(requestId)).to.deep.equal({ documents: 1, versions: 2, anchorings: 2, files: 2 });
  });

  it("refuses uploads to a cancelled request (409 INVALID_STATE) before reading their body, first uploads and new versions alike", async function () {
    const api = current().api.url;
    const { client, token, requestId } = await applicantWithRequest("cancelled", api);
    const uploaded = await client.upload("POST", `/requests/${requestId}/documents`, file("before"), "a.png", {
      docType: docTypes[0],
    });
    expect(uploaded.status, JSON.stringify(uploaded.body)).to.equal(201);
    expect((await client.post(`/requests/${requestId}/cancel`, { reason: "no longer needed" })).status).to.equal(200);

    const first = await endlessUpload(api, "POST", token, `/requests/${requestId}/documents`, {
      docType: docTypes[1],
    });
    const next = await endlessUpload(
      api,
      "PUT",
      token,
      `/requests/${requestId}/documents/${uploaded.body.documentId}`,
      {},
    );
    for (const refused of [first, next]) {
      expect(refused.status).to.equal(409);
      expect(refused.body).to.deep.include({ code: "INVALID_STATE" });
      expect(refused.body.details).to.deep.equal({ currentStatus: "CANCELLED" });
    }
    expect(await tempUploads()).to.deep.equal([]);
    expect(await holdings(requestId)).to.deep.equal({ documents: 1, versions: 1, anchorings: 1, files: 1 });
  });

  it("refuses the same bytes twice in one request with 409 DUPLICATE_DOCUMENT naming no token, and stores nothing", async function () {
    const api = current().api.url;
    const alice = await applicantWithRequest("alice", api);
    const bytes = file("the same bytes");
    const mine = await alice.client.upload("POST", `/requests/${alice.requestId}/documents`, bytes, "a.png", {
      docType: docTypes[0],
    });
    expect(mine.status, JSON.stringify(mine.body)).to.equal(201);
    const again = await alice.client.upload("POST", `/requests/${alice.requestId}/documents`, bytes, "b.png", {
      docType: docTypes[1],
    });
    expect(again.status).to.equal(409);
    expect(again.body).to.deep.equal({
      code: "DUPLICATE_DOCUMENT",
      message: "A document with exactly these bytes is already in this request",
      details: { error: "DocumentAlreadyAnchored" },
    });
    expect(await holdings(alice.requestId)).to.deep.equal({ documents: 1, versions: 1, anchorings: 1, files: 1 });
  });
});
