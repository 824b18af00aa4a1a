import { createHash } from "node:crypto";
import { readdir } from "node:fs/promises";
import path from "node:path";
import { expect } from "chai";
import { documentRegistry } from "../../api/src/chain/contracts.ts";
import { applicantAddress, licenceAddress } from "../../api/src/chain/applicantKeys.ts";
import { developmentSecret } from "../../api/src/developmentSecrets.ts";
import type { ApiHandle } from "../../scripts/stack/stack.ts";
import { applicantToken, clientToken } from "./support/authClient.ts";
import { createDriver, type Driver } from "./support/platformDriver.ts";
import { executable, jpeg, pdf, png, text } from "./support/sampleFiles.ts";
import { seedWorkflow } from "./support/seedWorkflow.ts";
import { startS3Server, type S3ServerHandle as S3Server } from "./support/s3Server.ts";
import { current } from "./support/stackFixture.ts";
import { stage, workflow } from "./support/workflowDefinition.ts";
import { apiClient as client, type Json, expectError } from "./support/httpClient.ts";

const sha = (bytes: Buffer) => `0x${createHash("sha256").update(bytes).digest("hex")}`;

describe("applicants: requests and documents (HTTP, real stack)", function () {
  let driver: Driver;
  const run = `${Date.now() % 1e7}`;
  const [A, B, C] = ["PLANNING", "LAND_REGISTRY", "FIRE"].map((d) => `${d}_${run}`);
  let api: string;
  let alice: ReturnType<typeof client>;
  let bob: ReturnType<typeof client>;
  const aliceId = `alice-${run}`;

  before(async function () {
    const stack = current();
    api = stack.api.url;
    driver = await createDriver(stack);
    await seedWorkflow(
      stack,
      driver,
      workflow(
        "BUILDING_PERMIT",
        "Building permit",
        stage("s1", "Planning review", "SEQUENTIAL", { [A]: ["SITE_PLAN"], [B]: ["OWNERSHIP_DEED"] }),
        stage("s2", "Safety", "PARALLEL", { [C]: ["FIRE_SAFETY", "SITE_PLAN"] }),
      ),
    );
    alice = client(
      api,
      await applicantToken(api, { id: aliceId, name: "Alice Applicant", email: "alice@example.org" }),
    );
    bob = client(api, await applicantToken(api, { id: `bob-${run}`, name: "Bob" }));
  });
  after(async () => driver?.close());

  const outboxCount = async (requestId: string, kind?: string) =>
    (
      await driver.core.pool.query(
        `SELECT count(*)::int AS n FROM chain_transactions WHERE request_id = $1 ${kind ? "AND kind = $2" : ""}`,
        kind ? [requestId, kind] : [requestId],
      )
    ).rows[0].n as number;
  const onChain = (tokenId: number) => driver.licence(tokenId);

  describe("authentication and authorisation", function () {
    it("refuses anonymous callers with 401 and another applicant's id with 403", async function () {
      const anonymous = await client(api).post("/requests", { applicantId: aliceId, requestType: "BUILDING_PERMIT" });
      expectError(anonymous, 401, "UNAUTHORIZED");
      const impostor = await bob.post("/requests", { applicantId: aliceId, requestType: "BUILDING_PERMIT" });
      expectError(impostor, 403, "FORBIDDEN");
    });

    it("lets a system client with applications:write act for an applicant who delegated to it, under the applicant's own name", async function () {
      const admin = client(
        api,
        await clientToken(api, current().admin.clientId, current().admin.clientSecret, "admin"),
      );
      const created = await admin.post("/admin/clients", {
        name: `intake-${run}`,
        scopes: ["applications:write", "applications:read"],
      });
      expect(created.status).to.equal(201);
      const system = client(
        api,
        await clientToken(
          api,
          created.body.clientId,
          created.body.clientSecret,
          "applications:write applications:read",
        ),
      );
      const carol = client(api, await applicantToken(api, { id: `carol-${run}`, name: "Carol" }));
      const body = { applicantId: `carol-${run}`, requestType: "BUILDING_PERMIT", metadata: { applicantName: "Eve" } };
      expectError(await system.post("/requests", body), 403);
      expect((await carol.post("/delegations", { clientId: created.body.clientId })).status).to.equal(201);
      const made = await system.post("/requests", body);
      expect(made.status).to.equal(201);
      const detail = await system.get(`/requests/${made.body.requestId}`);
      expect(detail.body.applicant).to.deep.equal({ id: `carol-${run}`, name: "Carol", email: "" });
      const readOnly = await admin.post("/admin/clients", { name: `reader-${run}`, scopes: ["applications:read"] });
      const reader = client(
        api,
        await clientToken(api, readOnly.body.clientId, readOnly.body.clientSecret, "applications:read"),
      );
      expect((await reader.post("/requests", { applicantId: "x", requestType: "BUILDING_PERMIT" })).status).to.equal(
        403,
      );
    });
  });

  describe("creating a request", function () {
    it("mints the token to a custodial address of its own, Draft, pinned to the active workflow", async function () {
      const response = await alice.post("/requests", {
        applicantId: aliceId,
        requestType: "BUILDING_PERMIT",
        metadata: { parcel: "12/7" },
      });
      expect(response.status).to.equal(201);
      expect(response.body).to.have.keys("requestId", "requestNumber", "status", "transactionHash", "createdAt");
      expect(response.body.status).to.equal("DRAFT");
      expect(response.body.requestNumber).to.match(/^BP-\d{4}-\d{6}$/);
      const receipt = await driver.core.provider.getTransactionReceipt(response.body.transactionHash);
      expect(receipt?.status).to.equal(1);
      const detail = await alice.get(`/requests/${response.body.requestId}`);
      expect(detail.status).to.equal(200);
      const record = await onChain(detail.body.tokenId);
      const custody = await developmentSecret(current().config.dataDir, "custody.key");
      expect(record.owner).to.equal(licenceAddress(custody, aliceId, response.body.requestId));
      expect(record.status).to.equal(1n); // Draft
      expect(detail.body).to.include({ status: "DRAFT", requestType: "BUILDING_PERMIT" });
      expect(detail.body.applicant).to.deep.equal({ id: aliceId, name: "Alice Applicant", email: "alice@example.org" });
      expect(detail.body.metadata).to.deep.equal({ parcel: "12/7" });
      expect(detail.body.blockchainData).to.deep.equal({
        tokenId: detail.body.tokenId,
        contractAddress: current().deployment.contracts.LicenceToken,
        creationTxHash: response.body.transactionHash,
      });
      expect(detail.body.timeline.map((e: Json) => e.eventType)).to.deep.equal(["REQUEST_CREATED", "NFT_MINTED"]);
      expect(detail.body.currentStage).to.equal(null);
    });

    it("mints each of an applicant's licences to a different address, and each one's holder proof verifies", async function () {
      const ids: string[] = [];
      for (let i = 0; i < 2; i++) {
        const created = await alice.post("/requests", { applicantId: aliceId, requestType: "BUILDING_PERMIT" });
        expect(created.status).to.equal(201);
        ids.push(created.body.requestId);
      }
      const custody = await developmentSecret(current().config.dataDir, "custody.key");
      const owners: string[] = [];
      for (const id of ids) {
        const { tokenId } = (await alice.get(`/requests/${id}`)).body;
        const { owner } = await onChain(tokenId);
        owners.push(owner);
        // Neither is the applicant's one address of before: nothing on chain links the two to each other or to Alice.
        expect(owner).to.not.equal(applicantAddress(custody, aliceId));
        const proof = await alice.get(`/requests/${id}/identity-proof`);
        expect(proof.status).to.equal(200);
        const check = await client(api).post(`/verify/holder/${tokenId}`, {
          applicantId: aliceId,
          salt: proof.body.salt,
        });
        expect(check.status).to.equal(200);
        expect(check.body).to.include({ tokenId, matches: true });
      }
      expect(owners[0]).to.not.equal(owners[1]);
    });

    it("refuses a type with no active workflow with 409 and records nothing", async function () {
      const before = (await driver.core.pool.query(`SELECT count(*)::int AS n FROM requests`)).rows[0].n;
      const response = await alice.post("/requests", { applicantId: aliceId, requestType: "TRADE_LICENSE" });
      expectError(response, 409, "NO_ACTIVE_WORKFLOW");
      expect((await driver.core.pool.query(`SELECT count(*)::int AS n FROM requests`)).rows[0].n).to.equal(before);
    });

    it("refuses an invalid body with 400 naming the fields", async function () {
      const response = await alice.post("/requests", { applicantId: "", requestType: "FISHING_LICENSE" });
      expectError(response, 400, "VALIDATION_ERROR");
      expect(response.body.details.issues.map((i: Json) => i.path)).to.deep.equal(["applicantId", "requestType"]);
    });
  });

  /** The document part of the flow, run against the local backend and against S3. */
  function documentFlow(label: string, apiFor: () => Promise<string>) {
    describe(`documents and submission (${label} storage)`, function () {
      let aliceHere: ReturnType<typeof client>;
      let requestId: string;
      let tokenId: number;
      let sitePlanId: string;

      before(async function () {
        const here = await apiFor();
        aliceHere = client(here, await applicantToken(here, { id: aliceId, name: "Alice Applicant" }));
        const created = await aliceHere.post("/requests", { applicantId: aliceId, requestType: "BUILDING_PERMIT" });
        requestId = created.body.requestId;
        tokenId = (await aliceHere.get(`/requests/${requestId}`)).body.tokenId;
      });

      it("refuses submission while documents are missing (400 MISSING_DOCUMENTS) and changes nothing", async function () {
        const response = await aliceHere.post(`/requests/${requestId}/submit`);
        expect(response.status).to.equal(400);
        expect(response.body).to.deep.equal({
          code: "MISSING_DOCUMENTS",
          message: "Required documents are missing: FIRE_SAFETY, OWNERSHIP_DEED, SITE_PLAN",
          details: { missingDocuments: ["FIRE_SAFETY", "OWNERSHIP_DEED", "SITE_PLAN"] },
        });
        expect(await outboxCount(requestId)).to.equal(1); // the mint only
        expect((await aliceHere.get(`/requests/${requestId}`)).body.status).to.equal("DRAFT");
      });

      it("stores a PDF, anchors its SHA-256 on chain and lists it", async function () {
        const bytes = pdf(`site plan ${label} ${run}`);
        const response = await aliceHere.upload(
          "POST",
          `/requests/${requestId}/documents`,
          bytes,
          "site-plan.pdf",
          { docType: "SITE_PLAN", description: "Lot 7" },
          "application/pdf",
        );
        expect(response.status).to.equal(201);
        expect(response.body).to.include({ docType: "SITE_PLAN", hash: sha(bytes), version: 1 });
        sitePlanId = response.body.documentId;
        const [anchor, isLatest] = documentRegistry.decodeFunctionResult(
          "anchorOf",
          await driver.core.provider.call({
            to: current().deployment.contracts.DocumentRegistry,
            data: documentRegistry.encodeFunctionData("anchorOf", [BigInt(tokenId), sha(bytes)]),
          }),
        );
        expect(anchor.tokenId).to.equal(BigInt(tokenId));
        expect(anchor.version).to.equal(1n);
        expect(anchor.documentId).to.equal(`0x${sitePlanId.replace(/-/g, "")}`);
        expect(isLatest).to.equal(true);
        const listed = await aliceHere.get(`/requests/${requestId}/documents`);
        expect(listed.body.documents).to.have.length(1);
        expect(listed.body.documents[0]).to.include({
          documentId: sitePlanId,
          docType: "SITE_PLAN",
          originalFilename: "site-plan.pdf",
          currentVersion: 1,
          currentHash: sha(bytes),
        });
      });

      it("refuses empty, unknown and disguised files (400 INVALID_FILE), storing nothing", async function () {
        const cases: [Buffer, string, string][] = [
          [Buffer.alloc(0), "empty.pdf", "EMPTY"],
          [text(), "notes.pdf", "UNSUPPORTED_TYPE"],
          [executable(), "photo.png", "UNSUPPORTED_TYPE"],
          [png(`disguised ${label} ${run}`), "deed.pdf", "DISGUISED"],
        ];
        const transactions = await outboxCount(requestId);
        for (const [bytes, name, reason] of cases) {
          const response = await aliceHere.upload("POST", `/requests/${requestId}/documents`, bytes, name, {
            docType: "OWNERSHIP_DEED",
          });
          expect(response.status, name).to.equal(400);
          expect(response.body.code, name).to.equal("INVALID_FILE");
          expect(response.body.details.reason, name).to.equal(reason);
        }
        expect(await outboxCount(requestId)).to.equal(transactions);
        expect((await aliceHere.get(`/requests/${requestId}/documents`)).body.documents).to.have.length(1);
      });

      it("refuses a document type the workflow does not use (400 INVALID_DOCUMENT_TYPE)", async function () {
        const response = await aliceHere.upload("POST", `/requests/${requestId}/documents`, pdf("tax"), "tax.pdf", {
          docType: "TAX_RETURN",
        });
        expectError(response, 400, "INVALID_DOCUMENT_TYPE");
        expect(response.body.details.allowedDocumentTypes).to.deep.equal([
          "FIRE_SAFETY",
          "OWNERSHIP_DEED",
          "SITE_PLAN",
        ]);
      });

      it("refuses a file over 10 MB with 413 in the Error shape", async function () {
        const big = Buffer.concat([pdf("big"), Buffer.alloc(11 * 1024 * 1024, 0x20)]);
        const response = await aliceHere.upload("POST", `/requests/${requestId}/documents`, big, "big.pdf", {
          docType: "OWNERSHIP_DEED",
        });
        expectError(response, 413, "PAYLOAD_TOO_LARGE");
      });

      it("accepts PNG and JPEG, then submits: SUBMITTED at stage 1 with its pending department", async function () {
        expect(
          (
            await aliceHere.upload(
              "POST",
              `/requests/${requestId}/documents`,
              png(`deed ${label} ${run}`),
              "deed.png",
              { docType: "OWNERSHIP_DEED" },
              "image/png",
            )
          ).status,
        ).to.equal(201);
        expect(
          (
            await aliceHere.upload(
              "POST",
              `/requests/${requestId}/documents`,
              jpeg(`fire ${label} ${run}`),
              "fire.jpg",
              { docType: "FIRE_SAFETY" },
              "image/jpeg",
            )
          ).status,
        ).to.equal(201);
        const again = await aliceHere.upload(
          "POST",
          `/requests/${requestId}/documents`,
          jpeg(`other ${label} ${run}`),
          "fire2.jpg",
          { docType: "FIRE_SAFETY" },
        );
        expectError(again, 409, "DOCUMENT_EXISTS");

        const submitted = await aliceHere.post(`/requests/${requestId}/submit`);
        expect(submitted.status).to.equal(200);
        expect(submitted.body).to.include({ requestId, status: "SUBMITTED" });
        expect(submitted.body.currentStage).to.include({
          stageId: "s1",
          stageName: "Planning review",
          executionType: "SEQUENTIAL",
        });
        expect(submitted.body.pendingDepartments).to.deep.equal([A]);
        expect((await onChain(tokenId)).status).to.equal(2n); // Submitted
        const detail = await aliceHere.get(`/requests/${requestId}`);
        expect(detail.body.status).to.equal("SUBMITTED");
        expect(detail.body.currentStage.stageName).to.equal("Planning review");
        expect(detail.body.submittedAt).to.be.a("string");
      });

      it("anchors a new version (PUT) and serves every version through signed URLs", async function () {
        const v2 = pdf(`site plan v2 ${label} ${run}`);
        const response = await aliceHere.upload(
          "PUT",
          `/requests/${requestId}/documents/${sitePlanId}`,
          v2,
          "site-plan-v2.pdf",
          { description: "moved the garage" },
        );
        expect(response.status).to.equal(200);
        expect(response.body).to.deep.include({
          documentId: sitePlanId,
          newVersion: 2,
          newHash: sha(v2),
          invalidatedApprovals: [],
        });
        const detail = await aliceHere.get(`/documents/${sitePlanId}`);
        expect(detail.body.versions.map((v: Json) => [v.version, v.hash, v.mimeType])).to.deep.equal([
          [1, detail.body.versions[0].hash, "application/pdf"],
          [2, sha(v2), "application/pdf"],
        ]);
        const latest = await fetch(detail.body.downloadUrl);
        expect(latest.status).to.equal(200);
        expect(sha(Buffer.from(await latest.arrayBuffer()))).to.equal(sha(v2));
        const first = await aliceHere.get(`/documents/${sitePlanId}/download?version=1`);
        expect(Date.parse(first.body.expiresAt) - Date.now()).to.be.within(3_500_000, 3_600_000);
        const v1 = await fetch(first.body.downloadUrl);
        expect(sha(Buffer.from(await v1.arrayBuffer()))).to.equal(detail.body.versions[0].hash);
        if (label === "local") {
          const tampered = first.body.downloadUrl.replace(
            /signature=([0-9a-f])/,
            (_: string, c: string) => `signature=${c === "0" ? "1" : "0"}`,
          );
          const refused = await fetch(tampered);
          expect(refused.status).to.equal(403);
          expect(((await refused.json()) as Json).code).to.equal("FORBIDDEN");
        }
        expectError(await aliceHere.get(`/documents/${sitePlanId}/download?version=9`), 404);
      });

      it("tells the whole story in the timeline, in order", async function () {
        const timeline = await aliceHere.get(`/requests/${requestId}/timeline`);
        expect(timeline.body.events.map((e: Json) => e.eventType)).to.deep.equal([
          "REQUEST_CREATED",
          "NFT_MINTED",
          "DOCUMENT_UPLOADED",
          "DOCUMENT_UPLOADED",
          "DOCUMENT_UPLOADED",
          "REQUEST_SUBMITTED",
          "DOCUMENT_UPDATED",
        ]);
        for (const event of timeline.body.events.slice(1)) expect(event.transactionHash).to.match(/^0x[0-9a-f]{64}$/);
        expect(timeline.body.events[2].actor).to.deep.include({ type: "APPLICANT", id: aliceId });
      });

      it("refuses to cancel a submitted request (409 INVALID_STATE naming the status)", async function () {
        const response = await aliceHere.post(`/requests/${requestId}/cancel`, { reason: "changed my mind" });
        expect(response.status).to.equal(409);
        expect(response.body).to.deep.equal({
          code: "INVALID_STATE",
          message: "Cannot cancel a request in status SUBMITTED",
          details: { currentStatus: "SUBMITTED" },
        });
      });
    });
  }

  documentFlow("local", async () => current().api.url);

  let s3: S3Server | undefined;
  let s3Api: ApiHandle | undefined;
  after(async () => {
    await s3Api?.stop();
    await s3?.stop();
  });
  documentFlow("S3", async () => {
    s3 = await startS3Server();
    s3Api = await current().startExtraApi(undefined, {
      STORAGE_BACKEND: "s3",
      S3_ENDPOINT: s3.endpoint,
      S3_BUCKET: `docs-${run}`,
      S3_ACCESS_KEY_ID: "S3RVER",
      S3_SECRET_ACCESS_KEY: "S3RVER",
      S3_FORCE_PATH_STYLE: "true",
    });
    return s3Api.url;
  });

  describe("cancelling", function () {
    it("cancels a draft on chain, then refuses document changes", async function () {
      const created = await alice.post("/requests", { applicantId: aliceId, requestType: "BUILDING_PERMIT" });
      const cancelled = await alice.post(`/requests/${created.body.requestId}/cancel`, { reason: "duplicate" });
      expect(cancelled.status).to.equal(200);
      expect(cancelled.body).to.include({ requestId: created.body.requestId, status: "CANCELLED" });
      const detail = await alice.get(`/requests/${created.body.requestId}`);
      expect(detail.body.status).to.equal("CANCELLED");
      expect((await onChain(detail.body.tokenId)).status).to.equal(6n);
      const upload = await alice.upload(
        "POST",
        `/requests/${created.body.requestId}/documents`,
        pdf(`late ${run}`),
        "late.pdf",
        { docType: "SITE_PLAN" },
      );
      expectError(upload, 409, "INVALID_STATE");
    });
  });

  describe("isolation between applicants", function () {
    it("hides one applicant's requests and documents from another (404, not 403)", async function () {
      const mine = (await alice.get("/requests?limit=100")).body.requests as Json[];
      expect(mine.length).to.be.greaterThan(0);
      const theirs = (await bob.get("/requests?limit=100")).body.requests as Json[];
      expect(theirs.filter((r) => mine.some((m) => m.requestId === r.requestId))).to.deep.equal([]);
      const target = mine[0].requestId;
      for (const route of [`/requests/${target}`, `/requests/${target}/timeline`, `/requests/${target}/documents`]) {
        const response = await bob.get(route);
        expect(response.status, route).to.equal(404);
        expect(response.body.code).to.equal("NOT_FOUND");
      }
      expectError(await bob.post(`/requests/${target}/submit`), 404);
      expectError(await bob.post(`/requests/${target}/cancel`), 404);
      const docs = (await alice.get(`/requests/${mine.find((r) => r.status === "SUBMITTED")!.requestId}/documents`))
        .body.documents as Json[];
      expectError(await bob.get(`/documents/${docs[0].documentId}`), 404);
      expectError(await bob.get(`/documents/${docs[0].documentId}/download`), 404);
    });
  });

  describe("listing", function () {
    it("filters, sorts and paginates", async function () {
      const all = await alice.get("/requests?limit=100&sortBy=createdAt&sortOrder=asc");
      expect(all.status).to.equal(200);
      const total = all.body.pagination.total;
      expect(all.body.pagination).to.deep.equal({ page: 1, limit: 100, total, totalPages: Math.ceil(total / 100) });
      const times = all.body.requests.map((r: Json) => Date.parse(r.createdAt));
      expect([...times].sort((a, b) => a - b)).to.deep.equal(times);
      const submitted = await alice.get("/requests?status=SUBMITTED");
      expect(submitted.body.requests.every((r: Json) => r.status === "SUBMITTED")).to.equal(true);
      expect(submitted.body.requests[0].currentStage).to.equal("Planning review");
      const page2 = await alice.get("/requests?limit=1&page=2");
      expect(page2.body.requests).to.have.length(1);
      expect(page2.body.requests[0].requestId).to.equal(
        (await alice.get("/requests?limit=2")).body.requests[1].requestId,
      );
      for (const bad of ["limit=0", "limit=101", "page=0", "sortBy=name", "status=UNKNOWN"]) {
        const response = await alice.get(`/requests?${bad}`);
        expect(response.status, bad).to.equal(400);
        expect(response.body.code).to.equal("VALIDATION_ERROR");
      }
    });
  });

  describe("Idempotency-Key", function () {
    it("replays the stored response of a repeated request and sends exactly one transaction", async function () {
      const key = `create-${run}`;
      const body = { applicantId: aliceId, requestType: "BUILDING_PERMIT", metadata: { attempt: 1 } };
      const [first, second] = await Promise.all([
        alice.post("/requests", body, { "idempotency-key": key }),
        alice.post("/requests", body, { "idempotency-key": key }),
      ]);
      const statuses = [first.status, second.status].sort();
      const winner = first.status === 201 ? first : second;
      expect(statuses[0]).to.equal(201);
      expect([201, 409]).to.include(statuses[1]);
      const replay = await alice.post("/requests", body, { "idempotency-key": key });
      expect(replay.status).to.equal(201);
      expect(replay.body).to.deep.equal(winner.body);
      expect(replay.headers.get("idempotent-replayed")).to.equal("true");
      expect(await outboxCount(winner.body.requestId, "MINT_NFT")).to.equal(1);
      const { rows } = await driver.core.pool.query(
        `SELECT count(*)::int AS n FROM requests WHERE metadata->>'attempt' = '1' AND applicant_id = $1`,
        [aliceId],
      );
      expect(rows[0].n).to.equal(1);

      const reused = await alice.post("/requests", { ...body, metadata: { attempt: 2 } }, { "idempotency-key": key });
      expectError(reused, 422, "IDEMPOTENCY_KEY_REUSED");
      // Scoped to the caller: the same key from someone else is a different key.
      expect(
        (
          await bob.post(
            "/requests",
            { applicantId: `bob-${run}`, requestType: "BUILDING_PERMIT" },
            { "idempotency-key": key },
          )
        ).status,
      ).to.equal(201);
    });

    it("answers 409 while the first request with the key is still running", async function () {
      // A live claim: its lease runs for another hour (a lapsed one belongs to a dead process and is taken over).
      await driver.core.pool.query(
        `INSERT INTO idempotency_keys (caller, key, fingerprint, state, locked_until) VALUES ($1, 'busy-${run}', 'x', 'IN_PROGRESS', now() + interval '1 hour')`,
        [`applicant:${aliceId}`],
      );
      const response = await alice.post(
        "/requests",
        { applicantId: aliceId, requestType: "BUILDING_PERMIT" },
        { "idempotency-key": `busy-${run}` },
      );
      expect(response.status).to.equal(422); // a different fingerprint is reported first
      await driver.core.pool.query(`UPDATE idempotency_keys SET fingerprint = $1 WHERE key = 'busy-${run}'`, [
        (await import("../../api/src/http/idempotency.ts")).fingerprint(
          "POST",
          "/api/v1/requests",
          JSON.stringify({ applicantId: aliceId, requestType: "BUILDING_PERMIT" }),
        ),
      ]);
      const busy = await alice.post(
        "/requests",
        { applicantId: aliceId, requestType: "BUILDING_PERMIT" },
        { "idempotency-key": `busy-${run}` },
      );
      expectError(busy, 409, "IDEMPOTENCY_IN_PROGRESS");
    });

    it("never stores token or client-secret responses (those routes ignore the key)", async function () {
      const key = `secret-${run}`;
      const form = new URLSearchParams({
        grant_type: "client_credentials",
        client_id: current().admin.clientId,
        client_secret: current().admin.clientSecret,
        scope: "admin",
      });
      const response = await fetch(`${api}/api/v1/auth/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", "idempotency-key": key },
        body: form,
      });
      expect(response.status).to.equal(200);
      const admin = client(api, ((await response.json()) as Json).access_token);
      expect(
        (
          await admin.post(
            "/admin/clients",
            { name: `k-${run}`, scopes: ["documents:read"] },
            { "idempotency-key": key },
          )
        ).status,
      ).to.equal(201);
      const { rows } = await driver.core.pool.query(`SELECT count(*)::int AS n FROM idempotency_keys WHERE key = $1`, [
        key,
      ]);
      expect(rows[0].n).to.equal(0);
    });

    it("makes a repeated upload anchor once", async function () {
      const created = await alice.post("/requests", { applicantId: aliceId, requestType: "BUILDING_PERMIT" });
      const bytes = pdf(`idempotent upload ${run}`);
      const send = () =>
        alice.upload(
          "POST",
          `/requests/${created.body.requestId}/documents`,
          bytes,
          "plan.pdf",
          { docType: "SITE_PLAN" },
          "application/pdf",
          { "idempotency-key": `upload-${run}` },
        );
      const first = await send();
      const second = await send();
      expect(first.status).to.equal(201);
      expect(second.status).to.equal(201);
      expect(second.body).to.deep.equal(first.body);
      expect(await outboxCount(created.body.requestId, "DOC_UPDATE")).to.equal(1);
    });
  });

  describe("when the chain is unreachable", function () {
    it("answers 503 CHAIN_UNAVAILABLE, keeps no row or file, and the same call works once the chain is back", async function () {
      const created = await alice.post("/requests", { applicantId: aliceId, requestType: "BUILDING_PERMIT" });
      const requestId = created.body.requestId;
      const bytes = pdf(`while down ${run}`);
      const filesDir = path.join(current().config.dataDir, "files", "documents", requestId);
      await current().stopChain("clean");
      try {
        const refused = await alice.upload("POST", `/requests/${requestId}/documents`, bytes, "plan.pdf", {
          docType: "SITE_PLAN",
        });
        expectError(refused, 503, "CHAIN_UNAVAILABLE");
        expectError(await alice.post("/requests", { applicantId: aliceId, requestType: "BUILDING_PERMIT" }), 503);
      } finally {
        await current().startChain();
      }
      const { rows } = await driver.core.pool.query(`SELECT count(*)::int AS n FROM documents WHERE request_id = $1`, [
        requestId,
      ]);
      expect(rows[0].n).to.equal(0);
      expect(await readdir(filesDir).catch(() => [])).to.deep.equal([]);
      const retried = await alice.upload("POST", `/requests/${requestId}/documents`, bytes, "plan.pdf", {
        docType: "SITE_PLAN",
      });
      expect(retried.status).to.equal(201);
      expect(retried.body.hash).to.equal(sha(bytes));
    });
  });

  describe("two API processes", function () {
    it("serve concurrent creations from the same operator wallet without a nonce collision", async function () {
      const second = await current().startExtraApi();
      try {
        const other = client(second.url, await applicantToken(second.url, { id: aliceId, name: "Alice Applicant" }));
        const responses = await Promise.all(
          Array.from({ length: 16 }, (_, i) =>
            (i % 2 ? alice : other).post("/requests", {
              applicantId: aliceId,
              requestType: "BUILDING_PERMIT",
              metadata: { burst: i },
            }),
          ),
        );
        expect(responses.map((r) => r.status)).to.deep.equal(Array(16).fill(201));
        const hashes = responses.map((r) => r.body.transactionHash);
        const { rows } = await driver.core.pool.query(
          `SELECT nonce FROM chain_transactions WHERE tx_hash = ANY($1) ORDER BY nonce`,
          [hashes],
        );
        const nonces = rows.map((r) => Number(r.nonce));
        expect(nonces).to.deep.equal(Array.from({ length: 16 }, (_, i) => nonces[0] + i));
        const numbers = new Set(responses.map((r) => r.body.requestNumber));
        expect(numbers.size).to.equal(16);
      } finally {
        await second.stop();
      }
    });
  });

  it("leaves no temp upload files behind", async function () {
    const tmp = path.join(current().config.dataDir, "tmp", "uploads");
    expect(await readdir(tmp).catch(() => [])).to.deep.equal([]);
  });
});
