/**
 * Public verification on the real stack: by token id, by signed QR payload (decoded from the PNG the API serves),
 * and by document hash; every verdict (VALID, NOT_ISSUED, EXPIRED, SUSPENDED, REVOKED, INVALID_QR, UNKNOWN) from
 * the chain's own answers.
 */
import { createHash } from "node:crypto";
import { expect } from "chai";
import jsQRModule from "jsqr";
import { PNG } from "pngjs";
import { licenceToken } from "../../api/src/chain/contracts.ts";
import { registerWorkflow } from "../../api/src/domain/workflows/registerWorkflow.ts";
import { QrIssuer } from "../../api/src/domain/verification/qrPayload.ts";
import { applicantToken } from "./support/authClient.ts";
import type { departmentClient } from "./support/departmentClient.ts";
import { apiClient as http, expectError } from "./support/httpClient.ts";
import { createDriver, type Driver } from "./support/platformDriver.ts";
import { pdf } from "./support/sampleFiles.ts";
import { domainContext, seedWorkflow } from "./support/seedWorkflow.ts";
import { eventually } from "./support/eventually.ts";
import { adminSession, departmentSession, letters, type Applicant } from "./support/sessions.ts";
import { current } from "./support/stackFixture.ts";
import { draftRequest } from "./support/submittedRequest.ts";
import { stage, workflow } from "./support/workflowDefinition.ts";

// jsqr is CommonJS with `exports.default`: under Node's ESM interop the function sits one level down.
const jsQR = ((jsQRModule as unknown as { default?: unknown }).default ?? jsQRModule) as unknown as (
  data: Uint8ClampedArray,
  width: number,
  height: number,
) => { data: string } | null;
const sha256 = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("verification: by token, QR code and document hash (public, real stack)", function () {
  const run = `${Date.now() % 1e7}`;
  const tag = letters(run);
  const code = `VERIFY_${tag}`;
  const applicantId = `verify-${run}`;
  let driver: Driver;
  let api: string;
  let publicClient: ReturnType<typeof http>;
  let admin: ReturnType<typeof http>;
  let applicant: Applicant;
  let applicantBearer: string;
  let department: ReturnType<typeof departmentClient>;
  const permit = (name: string) =>
    workflow("BUILDING_PERMIT", name, stage("check", "Check", "SEQUENTIAL", { [code]: ["SITE_PLAN"] }));
  const r: Record<string, { id: string; tokenId: number; documentId: string; file: Buffer; approveTx?: string }> = {};

  async function draft(label: string, file = pdf(`${label} ${run}`)) {
    const { id, tokenId, docs } = await draftRequest(applicant, "BUILDING_PERMIT", {
      SITE_PLAN: [file, `${label}.pdf`],
    });
    r[label] = { id, tokenId, documentId: docs.SITE_PLAN, file };
    return r[label];
  }
  async function issued(label: string, file?: Buffer) {
    const request = await draft(label, file);
    expect((await applicant.post(`/requests/${request.id}/submit`)).status).to.equal(200);
    const approved = await department.post(`/requests/${request.id}/approve`, {
      remarks: "ok",
      reviewedDocuments: [request.documentId],
    });
    expect(approved.status).to.equal(200);
    request.approveTx = approved.body.transactionHash;
    return request;
  }

  before(async function () {
    const stack = current();
    driver = await createDriver(stack);
    let adminToken: string;
    ({ api, adminToken, admin } = await adminSession(stack));
    publicClient = http(api);
    department = (await departmentSession(api, adminToken, { code, name: "Verification Office" })).client;
    applicantBearer = await applicantToken(api, { id: applicantId, name: "Vera Verified" });
    applicant = { ...http(api, applicantBearer), id: applicantId };
    // A licence that expires 3 s after issuance: its workflow version is registered with that validity.
    const context = domainContext(stack, driver);
    await registerWorkflow(
      {
        ...context,
        config: {
          ...context.config,
          licenceValidityDays: { ...context.config.licenceValidityDays, BUILDING_PERMIT: 3 / 86_400 },
        },
      },
      permit("Short-lived permit"),
    );
    await issued("expiring");
    await seedWorkflow(stack, driver, permit("Verification permit"));
    await issued("valid");
    await draft("draft");
    await issued("revoked");
    await issued("suspended");
    expect((await admin.post(`/requests/${r.revoked.id}/revoke`, { reasonCode: 4, reason: "fraud" })).status).to.equal(
      200,
    );
    expect(
      (await admin.post(`/requests/${r.suspended.id}/suspend`, { reasonCode: 3, reason: "inspection" })).status,
    ).to.equal(200);
  });
  after(async () => driver?.close());

  const verify = (path: string) => publicClient.get(`/verify/${path}`);

  describe("by token id", function () {
    it("VALID: an issued licence, with the standing approvals and the chain proof, without authentication", async function () {
      const { body, status } = await verify(String(r.valid.tokenId));
      expect(status).to.equal(200);
      expect(body).to.include({
        isValid: true,
        verdict: "VALID",
        tokenId: r.valid.tokenId,
        requestType: "BUILDING_PERMIT",
        status: "APPROVED",
        applicantName: "Vera Verified",
      });
      expect(body.message).to.match(/^This licence is valid/);
      expect(body.requestNumber).to.match(/^BP-/);
      expect(Date.parse(body.expiresAt) - Date.parse(body.issuedAt)).to.equal(730 * 86_400_000);
      expect(body.approvals).to.have.length(1);
      expect(body.approvals[0]).to.include({
        departmentCode: code,
        departmentName: "Verification Office",
        stage: 1, // numbered from 1: the stage's stageOrder
        transactionHash: r.valid.approveTx,
        signedBy: "PLATFORM", // a custodial department: the platform's key signed for it
        reviewerThreshold: null,
      });
      expect(body.approvals[0].signer).to.match(/^0x[0-9a-f]{40}$/);
      // The proof is what the chain says.
      const [owner] = licenceToken.decodeFunctionResult(
        "ownerOf",
        await driver.core.provider.call({
          to: current().deployment.contracts.LicenceToken,
          data: licenceToken.encodeFunctionData("ownerOf", [r.valid.tokenId]),
        }),
      );
      expect(body.blockchainProof).to.include({
        chainId: current().config.chainId,
        contractAddress: current().deployment.contracts.LicenceToken,
        tokenId: r.valid.tokenId,
        ownerAddress: owner,
        transactionHash: r.valid.approveTx,
      });
      const receipt = await driver.core.provider.getTransactionReceipt(body.blockchainProof.transactionHash);
      expect(receipt?.status).to.equal(1);
      expect(receipt!.logs.some((log) => log.topics[0] === licenceToken.getEvent("LicenceIssued")!.topicHash)).to.equal(
        true,
      );
    });

    it("NOT_ISSUED, REVOKED, SUSPENDED (then VALID once reinstated), EXPIRED", async function () {
      const drafted = await verify(String(r.draft.tokenId));
      expect(drafted.body).to.include({ isValid: false, verdict: "NOT_ISSUED", status: "DRAFT", issuedAt: null });
      expect(drafted.body.approvals).to.deep.equal([]);
      expect((await verify(String(r.revoked.tokenId))).body).to.include({
        isValid: false,
        verdict: "REVOKED",
        status: "REVOKED",
      });
      expect((await verify(String(r.suspended.tokenId))).body).to.include({
        isValid: false,
        verdict: "SUSPENDED",
        status: "SUSPENDED",
      });
      expect((await admin.post(`/requests/${r.suspended.id}/reinstate`, {})).status).to.equal(200);
      expect((await verify(String(r.suspended.tokenId))).body).to.include({ isValid: true, verdict: "VALID" });
      const expiring = await verify(String(r.expiring.tokenId));
      await sleep(Math.max(0, Date.parse(expiring.body.expiresAt) - Date.now() + 1_500));
      // The chain's clock decides: a block after the expiry makes validityOf say Expired.
      await driver.registerCode(`TICK_${tag}`);
      expect((await verify(String(r.expiring.tokenId))).body).to.include({
        isValid: false,
        verdict: "EXPIRED",
        status: "EXPIRED",
      });
    });

    it("answers If-None-Match with 304 while the verdict stands, and with the new verdict and ETag once it changes", async function () {
      const at = (headers: Record<string, string> = {}) =>
        fetch(`${api}/api/v1/verify/${r.valid.tokenId}`, { headers });
      const first = await at();
      const etag = first.headers.get("etag")!;
      expect(etag).to.match(/^W\/"[\w-]{27}"$/);
      expect(first.headers.get("cache-control")).to.equal("no-cache");
      const unchanged = await at({ "if-none-match": etag });
      expect(unchanged.status).to.equal(304);
      expect(await unchanged.text()).to.equal("");
      expect((await admin.post(`/requests/${r.valid.id}/suspend`, { reasonCode: 3, reason: "check" })).status).to.equal(
        200,
      );
      const changed = await at({ "if-none-match": etag });
      expect(changed.status).to.equal(200);
      expect(changed.headers.get("etag")).not.to.equal(etag);
      expect(await changed.json()).to.include({ verdict: "SUSPENDED" });
      expect((await admin.post(`/requests/${r.valid.id}/reinstate`, {})).status).to.equal(200);
      // The same verdict again: the same ETag, whenever it was checked.
      expect((await at({ "if-none-match": etag })).status).to.equal(304);
    });

    it("404 UNKNOWN for a token that does not exist; 400 for a malformed id", async function () {
      const unknown = await verify("987654321");
      expect(unknown.status).to.equal(404);
      expect(unknown.body).to.deep.include({ code: "NOT_FOUND" });
      expect(unknown.body.details).to.deep.equal({ verdict: "UNKNOWN" });
      for (const bad of ["abc", "-1", "1.5", "12345678901234567890"]) {
        const response = await verify(bad);
        expect(response.status, bad).to.equal(400);
        expect(response.body.code, bad).to.equal("VALIDATION_ERROR");
      }
    });
  });

  describe("by QR code", function () {
    it("serves the QR code as PNG (decoded here) and SVG, holding the page URL with the signed payload", async function () {
      const json = await applicant.get(`/requests/${r.valid.id}/qr?format=json`);
      expect(json.status).to.equal(200);
      expect(json.body.payload).to.match(
        new RegExp(`^LAP1\\.${current().config.chainId}\\.[0-9a-f]{40}\\.${r.valid.tokenId}\\.[A-Za-z0-9_-]+$`),
      );
      expect(json.body.url).to.equal(`${api}/verify?qr=${json.body.payload}`);
      const issuer = (await verify("issuer")).body;
      expect(json.body.issuerAddress).to.equal(issuer.issuerAddress);

      const png = await fetch(`${api}/api/v1/requests/${r.valid.id}/qr`, {
        headers: { authorization: `Bearer ${applicantBearer}` },
      });
      expect(png.headers.get("content-type")).to.equal("image/png");
      const image = PNG.sync.read(Buffer.from(await png.arrayBuffer()));
      const decoded = jsQR(new Uint8ClampedArray(image.data), image.width, image.height);
      expect(decoded?.data).to.equal(json.body.url);

      const svg = await fetch(`${api}/api/v1/requests/${r.valid.id}/qr?format=svg`, {
        headers: { authorization: `Bearer ${applicantBearer}` },
      });
      expect(svg.headers.get("content-type")).to.equal("image/svg+xml");
      expect(await svg.text()).to.match(/^<svg[^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/);

      expect((await applicant.get(`/requests/${r.draft.id}/qr`)).body.code).to.equal("NOT_ISSUED");
      expectError(await publicClient.get(`/requests/${r.valid.id}/qr`), 401);
    });

    it("VALID for the payload or the URL; INVALID_QR for a tampered, foreign or malformed code", async function () {
      const { payload, url } = (await applicant.get(`/requests/${r.valid.id}/qr?format=json`)).body;
      for (const scanned of [payload, url]) {
        const answer = await verify(`qr/${encodeURIComponent(scanned)}`);
        expect(answer.status).to.equal(200);
        expect(answer.body).to.include({ isValid: true, verdict: "VALID", tokenId: r.valid.tokenId });
        expect(answer.body.qr).to.deep.equal({
          issuer: (await verify("issuer")).body.issuerAddress,
          signatureValid: true,
        });
      }
      // The revoked licence's genuine code: a valid signature, an invalid licence.
      const revoked = (await admin.get(`/requests/${r.revoked.id}/qr?format=json`)).body.payload;
      expect((await verify(`qr/${revoked}`)).body).to.include({ isValid: false, verdict: "REVOKED" });

      const parts = payload.split(".");
      const otherToken = [...parts.slice(0, 3), String(r.draft.tokenId), parts[4]].join(".");
      const flipped = parts[4][10] === "A" ? "B" : "A";
      const badSignature = [...parts.slice(0, 4), parts[4].slice(0, 10) + flipped + parts[4].slice(11)].join(".");
      const foreign = await new QrIssuer(`0x${"11".repeat(32)}`).sign({
        chainId: current().config.chainId,
        contract: current().deployment.contracts.LicenceToken,
        tokenId: BigInt(r.valid.tokenId),
      });
      const otherChain = await new QrIssuer(`0x${"11".repeat(32)}`).sign({
        chainId: 1,
        contract: current().deployment.contracts.LicenceToken,
        tokenId: BigInt(r.valid.tokenId),
      });
      for (const [what, scanned] of [
        ["another token", otherToken],
        ["an altered signature", badSignature],
        ["another issuer", foreign],
        ["another chain", otherChain],
        ["garbage", "hello"],
        ["a bare number", String(r.valid.tokenId)],
      ]) {
        const answer = await verify(`qr/${encodeURIComponent(scanned)}`);
        expect(answer.status, what).to.equal(200);
        expect(answer.body, what).to.include({ isValid: false, verdict: "INVALID_QR", tokenId: null });
        expect(answer.body.message, what).to.match(/not issued by the licence platform|altered/);
      }
    });
  });

  describe("by document hash", function () {
    it("VALID for the current version (hex with or without 0x, any case), SUPERSEDED for an older one", async function () {
      const hash = sha256(r.draft.file);
      for (const form of [hash, `0x${hash}`, hash.toUpperCase(), `0X${hash.toUpperCase()}`]) {
        const answer = await verify(`document/${form}`);
        expect(answer.status, form).to.equal(200);
        // A draft's document: genuine, but it does not name the request (a draft is nobody's business yet).
        expect(answer.body, form).to.include({
          isValid: true,
          isLatest: true,
          verdict: "VALID",
          documentId: r.draft.documentId,
          requestId: null,
          tokenId: r.draft.tokenId,
          docType: "SITE_PLAN",
          version: 1,
        });
      }
      expect((await verify(`document/${sha256(r.valid.file)}`)).body).to.include({
        verdict: "VALID",
        requestId: r.valid.id,
      });
      const v2 = pdf(`draft v2 ${run}`);
      expect(
        (await applicant.upload("PUT", `/requests/${r.draft.id}/documents/${r.draft.documentId}`, v2, "v2.pdf")).status,
      ).to.equal(200);
      const old = await verify(`document/${hash}`);
      expect(old.body).to.include({ isValid: false, isLatest: false, verdict: "SUPERSEDED", version: 1 });
      const current_ = await verify(`document/${sha256(v2)}`);
      expect(current_.body).to.include({ isValid: true, verdict: "VALID", version: 2 });
      const receipt = await driver.core.provider.getTransactionReceipt(current_.body.blockchainRecord.transactionHash);
      expect(receipt?.blockNumber).to.equal(current_.body.blockchainRecord.blockNumber);
      expect(current_.body.blockchainRecord.contractAddress).to.equal(current().deployment.contracts.DocumentRegistry);
    });

    it("404 for a hash nobody anchored; 400 for something that is not a SHA-256", async function () {
      const unknown = await verify(`document/${"ab".repeat(32)}`);
      expect(unknown.status).to.equal(404);
      expect(unknown.body.details).to.deep.include({ verdict: "UNKNOWN" });
      for (const bad of ["abc", "zz".repeat(32), "ab".repeat(33)]) {
        const response = await verify(`document/${bad}`);
        expect(response.status, bad).to.equal(400);
        expect(response.body.code, bad).to.equal("VALIDATION_ERROR");
      }
    });
  });

  describe("by document hash: one file in several requests", function () {
    const shared = pdf(`a certificate of incorporation ${run}`);
    const hash = sha256(shared);
    let first: (typeof r)[string];
    let second: (typeof r)[string];

    it("anchors one file in two requests of an applicant and in another applicant's, once in each; the same bytes again in one request are 409", async function () {
      first = await draft("sharedFirst", shared);
      second = await draft("sharedSecond", shared);
      const bobId = `bob-${run}`;
      const bob = http(api, await applicantToken(api, { id: bobId, name: "Bob Reuses" }));
      const bobs = await bob.post("/requests", { applicantId: bobId, requestType: "BUILDING_PERMIT" });
      const bobsUpload = await bob.upload("POST", `/requests/${bobs.body.requestId}/documents`, shared, "form.pdf", {
        docType: "SITE_PLAN",
      });
      expect(bobsUpload.status, JSON.stringify(bobsUpload.body)).to.equal(201);

      const again = await applicant.upload(
        "PUT",
        `/requests/${first.id}/documents/${first.documentId}`,
        shared,
        "again.pdf",
      );
      expect(again.status).to.equal(409);
      expect(again.body).to.deep.include({
        code: "DUPLICATE_DOCUMENT",
        message: "A document with exactly these bytes is already in this request",
      });
      expect((await applicant.get(`/documents/${first.documentId}`)).body.currentVersion).to.equal(1);
    });

    it("answers about one licence with ?tokenId=, and 404 UNKNOWN for a licence that does not hold the file", async function () {
      for (const request of [first, second]) {
        const answer = await verify(`document/${hash}?tokenId=${request.tokenId}`);
        expect(answer.status).to.equal(200);
        expect(answer.body).to.include({
          verdict: "VALID",
          tokenId: request.tokenId,
          documentId: request.documentId,
          requestId: null,
        });
      }
      const elsewhere = await verify(`document/${hash}?tokenId=${r.valid.tokenId}`);
      expect(elsewhere.status).to.equal(404);
      expect(elsewhere.body.details).to.deep.include({ verdict: "UNKNOWN" });
      expectError(await verify(`document/${hash}?tokenId=0`), 400);
    });

    it("answers an anonymous verifier with one record: the earliest while none is issued, then the issued licence's, naming that request alone", async function () {
      const before = await eventually("the earliest record", async () => {
        const answer = await verify(`document/${hash}`);
        return answer.status === 200 ? answer : undefined;
      });
      expect(before.body).to.include({ tokenId: first.tokenId, documentId: first.documentId, requestId: null });
      const licence = await issued("sharedIssued", shared);
      // The record is chosen from the index, which follows the chain within a block or two.
      const after = await eventually("the issued licence's record", async () => {
        const answer = await verify(`document/${hash}`);
        return answer.body.tokenId === licence.tokenId ? answer : undefined;
      });
      expect(after.status).to.equal(200);
      expect(after.body).to.include({
        verdict: "VALID",
        tokenId: licence.tokenId,
        documentId: licence.documentId,
        requestId: licence.id,
      });
      expect(Object.keys(after.body)).to.not.include.members(["records", "requests", "anchoredIn"]);
    });
  });
});
