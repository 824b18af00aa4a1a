/**
 * Security behaviour on the real stack: webhook targets, what public verification reveals, development
 * conveniences, identity-locker codes, bounded uploads, Idempotency-Key after a crash, the audit trail, quotas, PDF
 * active content, headers. Findings that depend on production settings run against an extra API process started with NODE_ENV=production
 * on the fixture's database and chain.
 */
import { expect } from "chai";
import { chromium } from "playwright-core";
import { ensureChromium } from "../../scripts/ensureChromium.ts";
import type { ApiHandle } from "../../scripts/stack/stack.ts";
import { deliver } from "../../api/src/webhooks/deliver.ts";
import { checkWebhookUrl, isAllowedAddress } from "../../api/src/webhooks/urlSafety.ts";
import http from "node:http";
import { createHash, randomUUID } from "node:crypto";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { deflateSync } from "node:zlib";
import { loadConfig } from "../../api/src/config.ts";
import { createAuth } from "../../api/src/auth/index.ts";
import { migrate } from "../../api/src/db/migrate.ts";
import { createPool } from "../../api/src/db/pool.ts";
import { auditTableWeakness } from "../../api/src/db/auditTableRights.ts";
import pg from "pg";
import { secretSealer } from "../../api/src/chain/secretSealer.ts";
import { jobClock } from "../../api/src/jobs/jobClock.ts";
import { webhookDeliveryRun } from "../../api/src/jobs/jobRunner.ts";
import { createLogger } from "../../api/src/observability/logger.ts";
import { fingerprint, IdempotencyStore } from "../../api/src/http/idempotency.ts";
import { eventually } from "./support/eventually.ts";
import {
  applicantCode,
  applicantToken,
  lockerApplicantToken,
  authorizeParams,
  clientToken,
  createClient,
  exchangeFields,
  pkce,
  TEST_CLIENT_ID,
  TEST_REDIRECT_URI,
} from "./support/authClient.ts";
import { apiClient, type Json, expectError } from "./support/httpClient.ts";
import { pdf } from "./support/sampleFiles.ts";
import { seedWorkflow } from "./support/seedWorkflow.ts";
import { createDepartment, departmentClient, type CreatedTestDepartment } from "./support/departmentClient.ts";
import { createDriver, type Driver } from "./support/platformDriver.ts";
import { productionEnv } from "./support/productionEnv.ts";
import { current } from "./support/stackFixture.ts";
import { startReceiver } from "./support/webhookReceiver.ts";
import { runApiAlone } from "../unit/support/runApiAlone.ts";
import { letters } from "./support/sessions.ts";
import { stage, workflow } from "./support/workflowDefinition.ts";

describe("security behaviour (real stack)", function () {
  const tag = letters(Date.now() % 1e8);
  const secret = "a-long-shared-secret-for-hmac-signing";
  const metricsToken = `metrics-scraper-${tag}`;
  let production: ApiHandle;
  let driver: Driver;
  let admin: string;
  let department: CreatedTestDepartment;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;

  before(async function () {
    const stack = current();
    driver = await createDriver(stack);
    receiver = await startReceiver();
    admin = await clientToken(stack.api.url, stack.admin.clientId, stack.admin.clientSecret, "admin");
    department = await createDepartment(stack.api.url, admin, { code: `SEC_${tag}`, name: "Security" });
    // Public reads limited to 5 a minute per client; one trusted proxy in front (X-Forwarded-For's last hop counts);
    // 3 requests per applicant per day; PDFs with active content refused.
    production = await stack.startExtraApi(
      undefined,
      await productionEnv(stack, {
        RATE_LIMIT_PUBLIC_PER_MINUTE: "5",
        TRUST_PROXY_HOPS: "1",
        REQUEST_QUOTA_PER_DAY: "3",
        REFUSE_ACTIVE_PDF: "true",
        METRICS_TOKEN: metricsToken,
      }),
    );
  });
  after(async () => {
    await production?.stop();
    await receiver?.stop();
    await driver?.close();
  });

  describe("webhook targets (SSRF)", function () {
    // Every one of these passed the hand-written deny-list; each is refused by the allow-list (global unicast only).
    const refused: [string, string][] = [
      ["http://[::ffff:127.0.0.1]/", "IPv4-mapped loopback"],
      ["http://[::ffff:169.254.169.254]/latest/meta-data/", "IPv4-mapped cloud metadata"],
      ["http://[::ffff:10.0.0.1]/", "IPv4-mapped private"],
      ["http://[::ffff:10.0.0.5]:8545/", "IPv4-mapped private, a chain port"],
      ["http://[64:ff9b::a9fe:a9fe]/", "NAT64 of the metadata address"],
      ["http://[fe90::1]/", "link-local beyond fe80:"],
      ["http://198.18.0.1/", "benchmarking 198.18/15"],
      ["http://192.0.0.192/", "IETF 192.0.0/24 (old metadata address)"],
      ["http://224.0.0.1/", "multicast"],
      ["http://240.0.0.1/", "reserved 240/4"],
      ["http://[::127.0.0.1]/", "IPv4-compatible loopback (::7f00:1)"],
      ["http://[2002:7f00:1::1]/", "6to4"],
      ["http://[fec0::1]/", "site-local"],
      ["http://[ff02::1]/", "IPv6 multicast"],
      ["http://100.64.0.1/", "carrier-grade NAT"],
      ["http://0.0.0.0/", "unspecified"],
      ["http://[::]/", "IPv6 unspecified"],
      ["http://127.0.0.1/x", "loopback"],
      ["http://localhost/x", "a name for loopback"],
      ["http://10.1.2.3/x", "private"],
      ["http://192.168.1.1/x", "private"],
      ["http://169.254.169.254/latest/meta-data", "link-local metadata"],
      ["http://[::1]/x", "IPv6 loopback"],
      ["http://[fd00::1]/x", "unique local"],
      ["http://[2001:db8::1]/x", "documentation"],
    ];
    for (const [url, what] of refused) {
      it(`refuses ${url} (${what}) at registration, in production, without saying what it resolves to`, async function () {
        const response = await departmentClient(production.url, department).post("/webhooks", {
          url,
          events: ["APPROVAL_REQUIRED"],
          secret,
        });
        expect(response.status, url).to.equal(400);
        expect(response.body.code, url).to.equal("INVALID_WEBHOOK_URL");
        expect(response.body.message).to.not.match(/\d+\.\d+\.\d+\.\d+|::/);
      });
    }

    it("accepts a public unicast address in production", async function () {
      const hooks = departmentClient(production.url, department);
      for (const url of ["https://93.184.216.34/hook", "https://[2606:2800:220:1:248:1893:25c8:1946]/hook"]) {
        const response = await hooks.post("/webhooks", { url, events: ["APPROVAL_REQUIRED"], secret });
        expect(response.status, url).to.equal(201);
        expect((await hooks.delete(`/webhooks/${response.body.webhookId}`)).status).to.equal(204);
      }
    });

    it("answers a test delivery to a refused target with 400 and no status or time, and sends nothing (no port scanner)", async function () {
      // Registered through the development API (loopback is allowed there), tested through the production one.
      const registered = await departmentClient(current().api.url, department).post("/webhooks", {
        url: `${receiver.url}`,
        events: ["APPROVAL_REQUIRED"],
        secret,
      });
      expect(registered.status).to.equal(201);
      const before = receiver.received.length;
      const test = await departmentClient(production.url, department).post(
        `/webhooks/${registered.body.webhookId}/test`,
        {},
      );
      expectError(test, 400, "INVALID_WEBHOOK_URL");
      expect(test.body).to.not.have.property("statusCode");
      expect(test.body).to.not.have.property("responseTime");
      expect(receiver.received.length).to.equal(before);
      const { rows } = await driver.core.pool.query(
        `SELECT response_time, response_status, error FROM webhook_logs WHERE webhook_id = $1`,
        [registered.body.webhookId],
      );
      expect(rows).to.deep.equal([
        { response_time: null, response_status: null, error: "refused: the target is not a public address" },
      ]);
      await departmentClient(current().api.url, department).delete(`/webhooks/${registered.body.webhookId}`);
    });

    it("checks the address the socket connects to: a name that re-binds to loopback after registration is refused at connect time", async function () {
      const port = new URL(receiver.url).port;
      let answer = "93.184.216.34"; // what the name resolves to when it is registered
      const resolve = async () => [{ address: answer, family: 4 }];
      const url = `http://rebinding.example:${port}/rebind`;
      expect((await checkWebhookUrl(url, { production: true, resolve })).hostname).to.equal("rebinding.example");
      answer = "127.0.0.1"; // TTL 0: by delivery time the same name points at the API's host
      const before = receiver.received.length;
      const registered = await departmentClient(current().api.url, department).post("/webhooks", {
        url: `${receiver.url}/rebind-registration`,
        events: ["APPROVAL_REQUIRED"],
        secret,
      });
      const target = { id: registered.body.webhookId as string, url, secret };
      const event = { eventId: `evt_rebind_${tag}`, eventType: "APPROVAL_REQUIRED", payload: { probe: true } };
      const attempt = await deliver(driver.core.pool, target, event, { production: true, resolve });
      expect(attempt).to.deep.include({ success: false, refused: true, statusCode: null, responseTime: null });
      expect(receiver.received.length).to.equal(before);
      // One public and one internal address: refused too (every address is checked, not the first).
      const mixed = async () => [
        { address: "93.184.216.34", family: 4 },
        { address: "::ffff:7f00:1", family: 6 },
      ];
      expect((await deliver(driver.core.pool, target, event, { production: true, resolve: mixed })).refused).to.equal(
        true,
      );
      // The same resolver in development (loopback allowed) reaches the receiver: the socket really used this lookup.
      const delivered = await deliver(driver.core.pool, target, event, { production: false, resolve });
      expect(delivered).to.deep.include({ success: true, refused: false, statusCode: 200 });
      expect(receiver.received.at(-1)!.path).to.equal("/rebind");
    });

    it("a real delivery job follows the same policy: NODE_ENV unset and DEV_CONVENIENCES off, a loopback target is refused", async function () {
      // Registered where loopback is allowed (the development API), delivered by a job configured without the
      // development conveniences and without NODE_ENV: no production flag, yet no local receiver either.
      const registered = await departmentClient(current().api.url, department).post("/webhooks", {
        url: `${receiver.url}/job`,
        events: ["APPROVAL_REQUIRED"],
        secret,
      });
      expect(registered.status).to.equal(201);
      const webhookId = registered.body.webhookId as string;
      const pool = driver.core.pool;
      const eventId = randomUUID();
      const deliveryId = randomUUID();
      await pool.query(
        `INSERT INTO events (id, type, departments, data, occurred_at) VALUES ($1, 'APPROVAL_REQUIRED', '{}', '{}', now())`,
        [eventId],
      );
      // No job is queued for it: only the run below attempts it.
      await pool.query(
        `INSERT INTO webhook_deliveries (id, event_id, webhook_id, event_name, delivery_id, payload, status) VALUES ($1, $2, $3, 'APPROVAL_REQUIRED', $4, '{"probe":true}', 'PENDING')`,
        [deliveryId, eventId, webhookId, `evt_job_${tag}`],
      );
      const { NODE_ENV: _unset, ...env } = current().env;
      const config = loadConfig({ ...env, DEV_CONVENIENCES: "false" });
      expect(config.nodeEnv).to.equal("development");
      const run = webhookDeliveryRun(
        { pool, config, webhookSecrets: secretSealer(driver.core.vault, "webhook-secret") },
        jobClock(),
        createLogger("silent"),
      );
      const before = receiver.received.length;
      expect((await run(deliveryId)).outcome).to.equal("RETRY");
      expect(receiver.received.length).to.equal(before);
      const { rows } = await pool.query(`SELECT response_status, error FROM webhook_logs WHERE delivery_id = $1`, [
        deliveryId,
      ]);
      expect(rows).to.deep.equal([{ response_status: null, error: "refused: the target is not a public address" }]);
      await pool.query(`UPDATE webhook_deliveries SET status = 'CANCELLED' WHERE id = $1`, [deliveryId]);
      await departmentClient(current().api.url, department).delete(`/webhooks/${webhookId}`);
    });

    it("classifies addresses with ipaddr.js: IPv4-mapped forms are unwrapped, only global unicast passes in production", function () {
      for (const a of [
        "::ffff:7f00:1",
        "::ffff:a9fe:a9fe",
        "64:ff9b::a9fe:a9fe",
        "fe90::1",
        "198.18.0.1",
        "192.0.0.192",
        "::7f00:1",
        "not-an-address",
      ]) {
        expect(isAllowedAddress(a, { production: true }), a).to.equal(false);
      }
      for (const a of ["8.8.8.8", "2001:4860:4860::8888", "::ffff:8.8.8.8"])
        expect(isAllowedAddress(a, { production: true }), a).to.equal(true);
      expect(isAllowedAddress("::ffff:127.0.0.1", { production: false })).to.equal(true); // development: local receivers
      expect(isAllowedAddress("10.0.0.1", { production: false })).to.equal(false);
    });
  });

  describe("public verification of tokens that are not issued licences", function () {
    const run = `${Date.now() % 1e7}`;
    const first = `PRIV_A_${tag}`;
    const second = `PRIV_B_${tag}`;
    const applicantId = `private-person-${run}`;
    let applicant: ReturnType<typeof apiClient>;
    let nameless: ReturnType<typeof apiClient>;
    let departments: Record<string, ReturnType<typeof departmentClient>>;
    const requests: Record<string, { id: string; tokenId: number; documentId: string; hash: string }> = {};

    async function draft(label: string, who = applicant) {
      const created = await who.post("/requests", {
        applicantId: who === applicant ? applicantId : `${applicantId}-nameless`,
        requestType: "BUILDING_PERMIT",
      });
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      const file = pdf(`${label} ${run}`);
      const uploaded = await who.upload("POST", `/requests/${created.body.requestId}/documents`, file, `${label}.pdf`, {
        docType: "PLAN",
      });
      expect(uploaded.status, JSON.stringify(uploaded.body)).to.equal(201);
      const detail = await who.get(`/requests/${created.body.requestId}`);
      requests[label] = {
        id: created.body.requestId,
        tokenId: detail.body.tokenId,
        documentId: uploaded.body.documentId,
        hash: createHash("sha256").update(file).digest("hex"),
      };
      return requests[label];
    }
    const submitted = async (label: string, who = applicant) => {
      const request = await draft(label, who);
      expect((await who.post(`/requests/${request.id}/submit`)).status).to.equal(200);
      return request;
    };
    const approve = async (code: string, request: { id: string; documentId: string }) => {
      const approved = await departments[code].post(`/requests/${request.id}/approve`, {
        remarks: "ok",
        reviewedDocuments: [request.documentId],
      });
      expect(approved.status, JSON.stringify(approved.body)).to.equal(200);
    };

    before(async function () {
      const stack = current();
      const api = stack.api.url;
      departments = {
        [first]: departmentClient(api, await createDepartment(api, admin, { code: first, name: "First" })),
        [second]: departmentClient(api, await createDepartment(api, admin, { code: second, name: "Second" })),
      };
      const stage = (code: string, order: number) => ({
        stageId: `s${order}`,
        stageName: `Stage ${order}`,
        stageOrder: order,
        executionType: "SEQUENTIAL" as const,
        completionCriteria: "ALL" as const,
        requiredApprovals: [{ departmentCode: code, requiredDocuments: ["PLAN"], isMandatory: true }],
      });
      await seedWorkflow(stack, driver, {
        workflowType: "BUILDING_PERMIT",
        name: `Privacy ${run}`,
        stages: [stage(first, 1), stage(second, 2)],
      });
      applicant = apiClient(api, await applicantToken(api, { id: applicantId, name: "Priya Private" }));
      nameless = apiClient(api, await applicantToken(api, { id: `${applicantId}-nameless` }));

      await draft("DRAFT");
      await submitted("SUBMITTED");
      await approve(first, await submitted("UNDER_REVIEW")); // one of two stages approved: still under review
      const changes = await submitted("PENDING_RESUBMISSION");
      expect(
        (
          await departments[first].post(`/requests/${changes.id}/request-changes`, {
            remarks: "another plan",
            reviewedDocuments: [changes.documentId],
          })
        ).status,
      ).to.equal(200);
      const cancelled = await draft("CANCELLED");
      expect((await applicant.post(`/requests/${cancelled.id}/cancel`)).status).to.equal(200);
      const rejected = await submitted("REJECTED");
      expect(
        (
          await departments[first].post(`/requests/${rejected.id}/reject`, {
            remarks: "no",
            reason: "OTHER",
            reviewedDocuments: [rejected.documentId],
          })
        ).status,
      ).to.equal(200);
      for (const label of ["APPROVED", "APPROVED_NAMELESS"]) {
        const request = await submitted(label, label === "APPROVED" ? applicant : nameless);
        await approve(first, request);
        await approve(second, request);
      }
    });

    const privateFields = (body: Json) => ({
      requestNumber: body.requestNumber,
      requestType: body.requestType,
      applicantName: body.applicantName,
      issuedAt: body.issuedAt,
      expiresAt: body.expiresAt,
      approvals: body.approvals,
      blockchainProof: body.blockchainProof,
    });
    const nothing = {
      requestNumber: null,
      requestType: null,
      applicantName: null,
      issuedAt: null,
      expiresAt: null,
      approvals: [],
      blockchainProof: null,
    };

    for (const [label, status] of [
      ["DRAFT", "DRAFT"],
      ["SUBMITTED", "SUBMITTED"],
      ["UNDER_REVIEW", "SUBMITTED"],
      ["PENDING_RESUBMISSION", "PENDING_RESUBMISSION"],
      ["CANCELLED", "CANCELLED"],
      ["REJECTED", "REJECTED"],
    ]) {
      it(`${label}: answers the verdict and status only, anonymously (no applicant, request, approvals or owner address)`, async function () {
        const { tokenId, hash } = requests[label];
        const response = await apiClient(current().api.url).get(`/verify/${tokenId}`);
        expect(response.status).to.equal(200);
        expect(response.body).to.include({ isValid: false, verdict: "NOT_ISSUED", status, tokenId });
        expect(privateFields(response.body)).to.deep.equal(nothing);
        const text = JSON.stringify(response.body);
        for (const secret of ["Priya", applicantId, requests[label].id]) expect(text).to.not.include(secret);
        // The document verdict of its file does not lead to the request either.
        const document = await apiClient(current().api.url).get(`/verify/document/${hash}`);
        expect(document.status).to.equal(200);
        expect(document.body).to.include({ verdict: "VALID", requestId: null, tokenId });
      });
    }

    it("APPROVED: an issued licence shows its holder, the request and the proof; without a known name, no name (never the identity-locker id)", async function () {
      const publicClient = apiClient(current().api.url);
      const issued = await publicClient.get(`/verify/${requests.APPROVED.tokenId}`);
      expect(issued.body).to.include({
        verdict: "VALID",
        status: "APPROVED",
        applicantName: "Priya Private",
        requestType: "BUILDING_PERMIT",
      });
      expect(issued.body.blockchainProof.ownerAddress).to.match(/^0x[0-9a-fA-F]{40}$/);
      expect(issued.body.approvals).to.have.length(2);
      expect((await publicClient.get(`/verify/document/${requests.APPROVED.hash}`)).body.requestId).to.equal(
        requests.APPROVED.id,
      );
      const anonymous = await publicClient.get(`/verify/${requests.APPROVED_NAMELESS.tokenId}`);
      expect(anonymous.body).to.include({ verdict: "VALID", applicantName: null });
      expect(JSON.stringify(anonymous.body)).to.not.include(`${applicantId}-nameless`);
    });

    it("rate-limits the public routes per client address: /verify* (and POST /verify/credential), the verification page and /health (429 with Retry-After)", async function () {
      // The production API allows 5 public reads a minute per client; behind one trusted proxy the client is the
      // last X-Forwarded-For entry, so each simulated client has its own budget.
      const as = (client: string, path: string) =>
        fetch(`${production.url}${path}`, { headers: { "x-forwarded-for": client } });
      for (let i = 0; i < 5; i++)
        expect((await as("203.0.113.7", `/api/v1/verify/${requests.APPROVED.tokenId}`)).status).to.not.equal(429);
      const limited = await as("203.0.113.7", "/health");
      expect(limited.status).to.equal(429);
      expect(limited.headers.get("retry-after")).to.match(/^\d+$/);
      expect(((await limited.json()) as Json).code).to.equal("RATE_LIMITED");
      expect((await as("203.0.113.7", "/api/v1/verify/document/" + requests.APPROVED.hash)).status).to.equal(429);
      expect((await as("203.0.113.7", "/verify")).status).to.equal(429);
      // A presented credential is checked by POST (too long for a URL), from the same budget.
      const present = (client: string) =>
        fetch(`${production.url}/api/v1/verify/credential`, {
          method: "POST",
          headers: { "x-forwarded-for": client, "content-type": "application/json" },
          body: JSON.stringify({ credential: "not.a.credential" }),
        });
      expect((await present("203.0.113.7")).status).to.equal(429);
      expect((await present("203.0.113.9")).status).to.equal(200);
      // Another client is not affected; IPv6 clients share a budget per /64.
      expect((await as("203.0.113.8", "/health")).status).to.not.equal(429);
      for (let i = 0; i < 5; i++) expect((await as(`2001:db8:1:2::${i + 1}`, "/health")).status).to.not.equal(429);
      expect((await as("2001:db8:1:2::ffff", "/health")).status).to.equal(429);
    });

    it("/metrics: rate-limited like the other public reads, and with METRICS_TOKEN set only for its bearer", async function () {
      const scrape = (client: string, token?: string) =>
        fetch(`${production.url}/metrics`, {
          headers: { "x-forwarded-for": client, ...(token ? { authorization: `Bearer ${token}` } : {}) },
        });
      const anonymous = await scrape("203.0.113.40");
      expect(anonymous.status).to.equal(401);
      expect(anonymous.headers.get("www-authenticate")).to.equal('Bearer realm="metrics"');
      expect(((await anonymous.json()) as Json).code).to.equal("UNAUTHORIZED");
      expect((await scrape("203.0.113.40", `${metricsToken}x`)).status).to.equal(401);
      for (let i = 0; i < 3; i++) {
        const scraped = await scrape("203.0.113.40", metricsToken);
        expect(scraped.status).to.equal(200);
        expect(await scraped.text()).to.include("# HELP");
      }
      // Five reads a minute per client here, the refused ones included: the sixth is refused whoever sends it.
      const limited = await scrape("203.0.113.40", metricsToken);
      expect(limited.status).to.equal(429);
      expect(limited.headers.get("retry-after")).to.match(/^\d+$/);
      expect((await scrape("203.0.113.41", metricsToken)).status).to.equal(200);
      // Without METRICS_TOKEN (the development API) it stays public.
      expect((await fetch(`${current().api.url}/metrics`)).status).to.equal(200);
    });
  });

  describe("development conveniences only where explicitly enabled (fail closed)", function () {
    it("an API given a real database and chain and nothing else refuses to start, and generates no secret", async function () {
      const stack = current();
      const dataDir = await mkdtemp(path.join(os.tmpdir(), "fail-closed-"));
      try {
        // No NODE_ENV, no DEV_CONVENIENCES: the forgotten-setting deployment of the review.
        const { code, output } = await runApiAlone({
          DATA_DIR: dataDir,
          PORT: "0",
          DATABASE_URL: stack.databaseUrl,
          CHAIN_RPC_URL: stack.rpcUrl,
          CHAIN_ID: String(stack.config.chainId),
          DEPLOYMENT_FILE: stack.config.deploymentFile!,
        });
        expect(code).to.not.equal(0);
        expect(output).to.match(/IDENTITY_PROVIDER_\* settings are required: the development identity provider is off/);
        expect(output).to.match(/MASTER_KEY is required/);
        expect(output).to.match(/DEV_CONVENIENCES=true/);
        expect(await readdir(dataDir)).to.deep.equal([]); // nothing generated
      } finally {
        await rm(dataDir, { recursive: true, force: true });
      }
    });

    it("refuses DEV_CONVENIENCES in production, on a non-loopback HOST, and with a database or chain on another host", function () {
      const on = { DEV_CONVENIENCES: "true" };
      expect(() => loadConfig({ ...on, NODE_ENV: "production" })).to.throw(
        /DEV_CONVENIENCES .* is refused in production/,
      );
      expect(() => loadConfig({ ...on, HOST: "0.0.0.0" })).to.throw(/refused with HOST=0\.0\.0\.0/);
      expect(() => loadConfig({ ...on, DATABASE_URL: "postgres://app@db.internal.example/licences" })).to.throw(
        /refused with a DATABASE_URL on another host/,
      );
      expect(() =>
        loadConfig({ ...on, CHAIN_RPC_URL: "http://besu.internal.example:8545", CHAIN_ID: "1337" }),
      ).to.throw(/refused with a CHAIN_RPC_URL on another host/);
      expect(loadConfig(on).devConveniences).to.equal(true); // a local stack
      expect(loadConfig({}).devConveniences).to.equal(false); // the default is off
    });

    it("the production API refuses applicant tokens of the development sign-in, though signed with its key for its issuer", async function () {
      const id = `l4-${tag}`;
      const development = await applicantToken(current().api.url, { id });
      const refused = await apiClient(production.url, development).get("/requests");
      expect(refused.status).to.equal(401);
      expect(refused.body.message).to.match(/development sign-in/);
      expect((await apiClient(current().api.url, development).get("/requests")).status).to.equal(200);
      const fromLocker = await lockerApplicantToken(current(), { id });
      expect((await apiClient(production.url, fromLocker).get("/requests")).status).to.equal(200);
    });

    it("the production API has no development sign-in: authorize goes to the configured identity provider, whatever login_hint says", async function () {
      const query = new URLSearchParams({
        client_id: "https://portal.example",
        redirect_uri: "https://portal.example/cb",
        state: "s",
        login_hint: "victim",
        code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
        code_challenge_method: "S256",
      });
      const response = await fetch(`${production.url}/api/v1/auth/identitylocker/authorize?${query}`, {
        redirect: "manual",
      });
      // To the real identity provider, never straight back to the redirect_uri with a code.
      expect(response.status).to.equal(302);
      expect(new URL(response.headers.get("location")!).origin).to.equal("https://id.example.org");
    });
  });

  describe("identity-locker codes: exact redirect_uri, PKCE S256, bound to their client", function () {
    const authorize = (base: string, params: Record<string, string>) =>
      fetch(`${base}/api/v1/auth/identitylocker/authorize?${new URLSearchParams(params)}`, { redirect: "manual" });
    const exchange = async (body: Record<string, string>) => {
      const response = await fetch(`${current().api.url}/api/v1/auth/identitylocker/token`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      return { status: response.status, body: (await response.json()) as Json };
    };

    it("accepts only the exact registered redirect_uri, for its own client_id (no prefix, path or query below it)", async function () {
      const { challenge } = pkce();
      const base = {
        client_id: "https://portal.example",
        state: "s",
        login_hint: "someone",
        code_challenge: challenge,
        code_challenge_method: "S256",
      };
      expect((await authorize(production.url, { ...base, redirect_uri: "https://portal.example/cb" })).status).to.equal(
        302,
      );
      for (const redirect of [
        "https://portal.example/cb/attacker-page",
        "https://portal.example/cb?next=evil",
        "https://portal.example/cb/../open-redirect",
        "https://portal.example/",
      ]) {
        const response = await authorize(production.url, { ...base, redirect_uri: redirect });
        expect(response.status, redirect).to.equal(403);
        expect(response.headers.get("location"), redirect).to.equal(null);
      }
      const otherClient = await authorize(production.url, {
        ...base,
        client_id: "another-app",
        redirect_uri: "https://portal.example/cb",
      });
      expect(otherClient.status).to.equal(403);
      expect(((await otherClient.json()) as Json).message).to.match(/not registered for this client_id/);
    });

    it("requires a PKCE S256 challenge at authorize (400 without one, or with plain)", async function () {
      const { query } = authorizeParams({ redirect_uri: TEST_REDIRECT_URI, state: "s", login_hint: "pkce-less" });
      query.delete("code_challenge");
      expect((await authorize(current().api.url, Object.fromEntries(query))).status).to.equal(400);
      const plain = authorizeParams({
        redirect_uri: TEST_REDIRECT_URI,
        state: "s",
        login_hint: "pkce-plain",
        code_challenge_method: "plain",
      }).query;
      expect((await authorize(current().api.url, Object.fromEntries(plain))).status).to.equal(400);
    });

    it("exchanges a code only with its code_verifier and its client_id; a wrong one burns the code", async function () {
      const missing = await exchange({
        code: await applicantCode(current().api.url, { id: `pkce-${tag}` }),
        redirect_uri: TEST_REDIRECT_URI,
        client_id: TEST_CLIENT_ID,
      });
      expect(missing).to.deep.equal({
        status: 400,
        body: { error: "invalid_request", error_description: "code_verifier is required (PKCE, S256)" },
      });

      // An intercepted code (it reached a page the attacker reads) is useless without the verifier.
      const stolen = await applicantCode(current().api.url, { id: `pkce-${tag}` });
      const attacker = await exchange({ ...exchangeFields(stolen), code_verifier: pkce().verifier });
      expect(attacker.body).to.deep.equal({
        error: "invalid_grant",
        error_description: "code_verifier does not match the code_challenge sent at authorize",
      });
      expect((await exchange(exchangeFields(stolen))).body.error).to.equal("invalid_grant"); // burnt

      const forOther = await applicantCode(current().api.url, { id: `pkce-${tag}` });
      const wrongClient = await exchange({ ...exchangeFields(forOther), client_id: "another-app" });
      expect(wrongClient.body).to.deep.equal({
        error: "invalid_grant",
        error_description: "The code was issued to another client_id",
      });

      const good = await exchange(exchangeFields(await applicantCode(current().api.url, { id: `pkce-${tag}` })));
      expect(good.status).to.equal(200);
      expect(good.body.access_token).to.be.a("string");
    });
  });

  describe("uploads: bounded while streaming, whatever the framing; checked before the body is read", function () {
    const boundary = "----security-boundary";
    let owner: ReturnType<typeof apiClient>;
    let ownerToken: string;
    let otherToken: string;
    let requestId: string;

    before(async function () {
      const api = current().api.url;
      const code = `UPLOADS_${tag}`;
      await createDepartment(api, admin, { code, name: "Uploads" });
      await seedWorkflow(
        current(),
        driver,
        workflow("BUILDING_PERMIT", `Uploads ${tag}`, stage("u", "U", "SEQUENTIAL", { [code]: ["PLAN"] })),
      );
      ownerToken = await applicantToken(api, { id: `uploader-${tag}` });
      otherToken = await applicantToken(api, { id: `intruder-${tag}` });
      owner = apiClient(api, ownerToken);
      const created = await owner.post("/requests", { applicantId: `uploader-${tag}`, requestType: "BUILDING_PERMIT" });
      expect(created.status).to.equal(201);
      requestId = created.body.requestId;
    });

    /**
     * A chunked multipart upload (no Content-Length) sent piece by piece; stops sending as soon as the API answers.
     * `body` yields the pieces; `end: false` never finishes the body (the API must answer without it).
     */
    function chunkedUpload(
      token: string,
      target: string,
      body: Iterable<Buffer>,
      end = true,
    ): Promise<{ status: number; body: Json; sent: number }> {
      const url = new URL(`${current().api.url}/api/v1${target}`);
      return new Promise((resolve, reject) => {
        let answered = false;
        let sent = 0;
        const request = http.request({
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          method: "POST",
          headers: {
            authorization: `Bearer ${token}`,
            "content-type": `multipart/form-data; boundary=${boundary}`,
            "transfer-encoding": "chunked",
          },
        });
        request.on("response", (response) => {
          answered = true;
          let text = "";
          response.on("data", (chunk) => (text += chunk));
          response.on("end", () => {
            request.destroy();
            resolve({ status: response.statusCode!, body: text ? JSON.parse(text) : {}, sent });
          });
        });
        request.on("error", (error) => {
          if (!answered) reject(error); // after the answer: the API closed the connection on us, as it should
        });
        (async () => {
          for (const piece of body) {
            if (answered || request.destroyed) return;
            sent += piece.length;
            if (!request.write(piece)) await new Promise((r) => request.once("drain", r));
          }
          if (end && !answered) request.end();
        })().catch(() => {});
      });
    }
    const head = (extraHeaders = "") =>
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="docType"\r\n\r\nPLAN\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="plan.pdf"\r\nContent-Type: application/pdf\r\n${extraHeaders}\r\n`,
      );
    const uploadsLeft = async () =>
      (await readdir(path.join(current().config.dataDir, "tmp", "uploads")).catch(() => [] as string[])).filter((n) =>
        n.startsWith("upload-"),
      );
    const documentsOf = async (id: string) =>
      (await driver.core.pool.query(`SELECT count(*)::int AS n FROM documents WHERE request_id = $1`, [id])).rows[0]
        .n as number;

    it("answers 413 to a chunked body past 10 MB, stores nothing and leaves no temp file", async function () {
      const megabyte = Buffer.alloc(1024 * 1024, 0x41);
      function* body() {
        yield head();
        yield Buffer.from("%PDF-1.7\n");
        for (let i = 0; i < 40; i++) yield megabyte; // 40 MB offered, no Content-Length
      }
      const answer = await chunkedUpload(ownerToken, `/requests/${requestId}/documents`, body());
      expectError(answer, 413, "PAYLOAD_TOO_LARGE");
      expect(await documentsOf(requestId)).to.equal(0);
      await new Promise((r) => setTimeout(r, 200));
      expect(await uploadsLeft()).to.deep.equal([]);
    });

    it("counts the raw bytes, not only the file's: a chunked 11 MB preamble before a small valid form is 413, nothing stored", async function () {
      // The multipart parser skips what comes before the first boundary without a limit of its own, and the file
      // and field limits never see it: only the raw byte count stops it.
      const megabyte = Buffer.alloc(1024 * 1024, 0x41);
      function* body() {
        for (let i = 0; i < 11; i++) yield megabyte;
        yield Buffer.from("\r\n");
        yield head();
        yield Buffer.from(`%PDF-1.7\n%preamble ${tag}\n`);
        yield Buffer.from(`\r\n--${boundary}--\r\n`);
      }
      const answer = await chunkedUpload(ownerToken, `/requests/${requestId}/documents`, body());
      expectError(answer, 413, "PAYLOAD_TOO_LARGE");
      expect(answer.sent).to.be.below(12 * 1024 * 1024);
      expect(await documentsOf(requestId)).to.equal(0);
      await new Promise((r) => setTimeout(r, 200));
      expect(await uploadsLeft()).to.deep.equal([]);
    });

    it("refuses a part whose headers pass 16 KiB (400 PART_HEADERS_TOO_LARGE) before they grow further", async function () {
      function* body() {
        yield head("X-Pad: ");
        for (let i = 0; i < 64; i++) yield Buffer.alloc(64 * 1024, 0x61); // a 4 MB header value, chunked
      }
      const answer = await chunkedUpload(ownerToken, `/requests/${requestId}/documents`, body());
      expect(answer.status).to.equal(400);
      expect(answer.body.details).to.deep.equal({ reason: "PART_HEADERS_TOO_LARGE" });
      expect(await documentsOf(requestId)).to.equal(0);
    });

    it("refuses more parts than a document upload has (400 TOO_MANY_PARTS), below the text-field limit", async function () {
      // 20 small text parts before a valid form: more than MAX_PARTS (16), fewer than the 32 text fields allowed,
      // so only the part count can refuse them (without it the form would be accepted).
      function* body() {
        for (let i = 0; i < 20; i++)
          yield Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="extra${i}"\r\n\r\nx\r\n`);
        yield head();
        yield Buffer.from(`%PDF-1.7\n%parts ${tag}\n\r\n--${boundary}--\r\n`);
      }
      const answer = await chunkedUpload(ownerToken, `/requests/${requestId}/documents`, body());
      expect(answer.status).to.equal(400);
      expect(answer.body.details).to.deep.equal({ reason: "TOO_MANY_PARTS" });
      expect(await documentsOf(requestId)).to.equal(0);
    });

    it("answers another applicant's upload with 404 before reading its body (the body never ends)", async function () {
      function* body() {
        yield head();
        yield Buffer.from("%PDF-1.7\n");
      }
      expectError(await chunkedUpload(otherToken, `/requests/${requestId}/documents`, body(), false), 404, "NOT_FOUND");
      expect(await uploadsLeft()).to.deep.equal([]);
    });

    it("still accepts a normal upload", async function () {
      const uploaded = await owner.upload(
        "POST",
        `/requests/${requestId}/documents`,
        pdf(`uploads ${tag}`),
        "plan.pdf",
        { docType: "PLAN" },
      );
      expect(uploaded.status, JSON.stringify(uploaded.body)).to.equal(201);
    });
  });

  describe("Idempotency-Key after a crash", function () {
    const applicantId = `crash-${tag}`;
    const code = `CRASH_${tag}`;
    let token: string;
    let reviewer: CreatedTestDepartment;
    const body = (n: string) => JSON.stringify({ applicantId, requestType: "BUILDING_PERMIT", metadata: { n } });
    type Answer = { status: number; body: Json; replayed: string | null };
    /** One HTTP call to the API at `base`; a connection the API cut (it was killed) is status 0. */
    type Call = (base: string) => Promise<Response>;
    const attempt = async (call: Call, base: string): Promise<Answer> => {
      try {
        const response = await call(base);
        const text = await response.text();
        return {
          status: response.status,
          body: (text ? JSON.parse(text) : {}) as Json,
          replayed: response.headers.get("idempotent-replayed"),
        };
      } catch {
        return { status: 0, body: {}, replayed: null }; // the connection was cut
      }
    };
    const postAs =
      (headers: Record<string, string>, target: string, text = "{}"): Call =>
      (base) =>
        fetch(`${base}/api/v1${target}`, {
          method: "POST",
          headers: { "content-type": "application/json", ...headers },
          body: text,
        });
    const applicant = (key: string) => ({ authorization: `Bearer ${token}`, "idempotency-key": key });
    const post = (base: string, key: string, text: string, target = "/requests") =>
      attempt(postAs(applicant(key), target, text), base);
    const requestsWith = async (n: string) =>
      (
        await driver.core.pool.query(`SELECT id FROM requests WHERE applicant_id = $1 AND metadata->>'n' = $2`, [
          applicantId,
          n,
        ])
      ).rows.map((r) => r.id as string);
    /** The request's outbox transactions of a kind, with their status. */
    const writesOf = async (requestId: string, kind: string) =>
      (
        await driver.core.pool.query(
          `SELECT tx_hash, status FROM chain_transactions WHERE request_id = $1 AND kind = $2`,
          [requestId, kind],
        )
      ).rows;
    const rpc = (method: string, params: unknown[] = []) =>
      fetch(current().rpcUrl, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
      }).then((r) => r.json());
    /** Retries (as a client would) while the key is in progress (the dead process's lease, or its write pending). */
    const retry = (call: Call, base: string, key: string) =>
      eventually(
        `a final answer for ${key}`,
        async () => {
          const answer = await attempt(call, base);
          return answer.status === 409 && answer.body.code === "IDEMPOTENCY_IN_PROGRESS" ? undefined : answer;
        },
        60_000,
      );

    /**
     * kill -9 of the API running `call` once its write is recorded under `key` (blocks are held back, so the request
     * is caught between record and answer), then the same call with the same key to an API restarted on its port:
     * 409 while the dead process's lease holds, then (the lease run out, as if its time had passed) the retry's
     * answer, a second retry's answer, and the hash of the transaction recorded before the kill.
     */
    async function crashAfterRecord(key: string, call: Call) {
      const stack = current();
      const target = await stack.startExtraApi();
      await rpc("evm_setAutomine", [false]);
      let restarted: ApiHandle | undefined;
      try {
        const cut = attempt(call, target.url);
        const recorded = await eventually(
          `the write of ${key} recorded with its key`,
          async () => {
            const { rows } = await driver.core.pool.query(
              `SELECT t.tx_hash FROM idempotency_keys k JOIN chain_transactions t ON t.id = k.outbox_tx_id WHERE k.key = $1`,
              [key],
            );
            return rows[0];
          },
          30_000,
        );
        await target.process.kill(); // SIGKILL mid-request
        expect((await cut).status).to.equal(0);
        await rpc("evm_setAutomine", [true]);
        await rpc("evm_mine");
        restarted = await stack.startExtraApi(target.port);
        // The dead process's lease holds the key until it runs out (15 s): in progress until then.
        expectError(await attempt(call, restarted.url), 409, "IDEMPOTENCY_IN_PROGRESS");
        await driver.core.pool.query(`UPDATE idempotency_keys SET locked_until = now() WHERE key = $1`, [key]);
        const answer = await retry(call, restarted.url, key);
        const again = await attempt(call, restarted.url);
        return { answer, again, transactionHash: recorded.tx_hash as string };
      } finally {
        await rpc("evm_setAutomine", [true]);
        await restarted?.stop();
      }
    }

    /** A fresh draft of the crash workflow (its one stage needs a PLAN), optionally with its PLAN and submitted. */
    async function draft(n: string, steps: { plan?: boolean; submit?: boolean } = {}): Promise<string> {
      const client = apiClient(current().api.url, token);
      const created = await client.post("/requests", { applicantId, requestType: "BUILDING_PERMIT", metadata: { n } });
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      const requestId = created.body.requestId as string;
      if (steps.plan || steps.submit) {
        const uploaded = await client.upload(
          "POST",
          `/requests/${requestId}/documents`,
          pdf(`crash plan ${n} ${tag}`),
          "plan.pdf",
          { docType: "PLAN" },
        );
        expect(uploaded.status, JSON.stringify(uploaded.body)).to.equal(201);
      }
      if (steps.submit) expect((await client.post(`/requests/${requestId}/submit`)).status).to.equal(200);
      return requestId;
    }

    before(async function () {
      reviewer = await createDepartment(current().api.url, admin, { code, name: "Crash" });
      await seedWorkflow(
        current(),
        driver,
        workflow("BUILDING_PERMIT", `Crash ${tag}`, stage("c", "C", "SEQUENTIAL", { [code]: ["PLAN"] })),
      );
      token = await applicantToken(current().api.url, { id: applicantId });
    });

    it("kill -9 during POST /requests after its mint was recorded: the retry gets the original answer, exactly one mint", async function () {
      const key = `crash-recorded-${tag}`;
      const { answer, again, transactionHash } = await crashAfterRecord(
        key,
        postAs(applicant(key), "/requests", body("recorded")),
      );
      expect(answer.status, JSON.stringify(answer.body)).to.equal(201);
      expect(answer.replayed).to.equal("true");
      expect(answer.body).to.include({ status: "DRAFT", transactionHash });
      const created = await requestsWith("recorded");
      expect(created).to.deep.equal([answer.body.requestId]); // exactly one request, one mint
      expect(await writesOf(answer.body.requestId, "MINT_NFT")).to.deep.equal([
        { tx_hash: transactionHash, status: "CONFIRMED" },
      ]);
      expect(again.body).to.deep.equal(answer.body); // and again: the same stored answer
    });

    it("kill -9 during a submission after its transaction was recorded: the retry gets the original answer, one submission", async function () {
      const requestId = await draft("submit-crash", { plan: true });
      const key = `crash-submit-${tag}`;
      const { answer, again, transactionHash } = await crashAfterRecord(
        key,
        postAs(applicant(key), `/requests/${requestId}/submit`),
      );
      expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
      expect(answer.replayed).to.equal("true");
      expect(answer.body).to.deep.include({
        requestId,
        status: "SUBMITTED",
        pendingDepartments: [code],
        transactionHash,
      });
      expect(answer.body.currentStage).to.include({ stageId: "c", stageName: "C" });
      expect(await writesOf(requestId, "SUBMIT")).to.deep.equal([{ tx_hash: transactionHash, status: "CONFIRMED" }]);
      expect(again.body).to.deep.equal(answer.body);
    });

    it("kill -9 during an approval after its transaction was recorded: the retry gets the original answer, one decision", async function () {
      const requestId = await draft("approve-crash", { submit: true });
      const key = `crash-approve-${tag}`;
      const decision = { remarks: "Checked after a crash", reviewedDocuments: [] };
      const { answer, again, transactionHash } = await crashAfterRecord(
        key,
        postAs(
          { "x-api-key": reviewer.apiKey, "x-department-code": code, "idempotency-key": key },
          `/requests/${requestId}/approve`,
          JSON.stringify(decision),
        ),
      );
      expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
      expect(answer.replayed).to.equal("true");
      // The one department's approval completed the only stage: the licence is issued.
      expect(answer.body).to.deep.include({
        status: "APPROVED",
        transactionHash,
        workflowStatus: { currentStage: "", isComplete: true, nextPendingDepartments: [] },
      });
      const approvals = await departmentClient(current().api.url, reviewer).get(`/requests/${requestId}/approvals`);
      expect(approvals.body.approvals.map((a: Json) => a.approvalId)).to.deep.equal([answer.body.approvalId]);
      expect(await writesOf(requestId, "APPROVAL")).to.deep.equal([{ tx_hash: transactionHash, status: "CONFIRMED" }]);
      expect(again.body).to.deep.equal(answer.body);
    });

    it("kill -9 during a document upload after its anchoring was recorded: the retry gets the original answer, one document", async function () {
      const requestId = await draft("upload-crash");
      const key = `crash-upload-${tag}`;
      const file = pdf(`crash upload ${tag}`);
      const upload: Call = (base) => {
        const form = new FormData();
        form.set("docType", "PLAN");
        form.set("file", new Blob([new Uint8Array(file)], { type: "application/pdf" }), "plan.pdf");
        return fetch(`${base}/api/v1/requests/${requestId}/documents`, {
          method: "POST",
          headers: applicant(key),
          body: form,
        });
      };
      const { answer, again, transactionHash } = await crashAfterRecord(key, upload);
      expect(answer.status, JSON.stringify(answer.body)).to.equal(201);
      expect(answer.replayed).to.equal("true");
      const { rows } = await driver.core.pool.query(
        `SELECT d.id, v.sha256, v.created_at FROM documents d JOIN document_versions v ON v.document_id = d.id WHERE d.request_id = $1`,
        [requestId],
      );
      expect(rows).to.have.length(1); // one document, one version
      expect(answer.body).to.deep.equal({
        documentId: rows[0].id,
        docType: "PLAN",
        hash: `0x${createHash("sha256").update(file).digest("hex")}`,
        version: 1,
        transactionHash,
        createdAt: rows[0].created_at.toISOString(),
      });
      expect(await writesOf(requestId, "DOC_UPDATE")).to.deep.equal([
        { tx_hash: transactionHash, status: "CONFIRMED" },
      ]);
      expect(again.body).to.deep.equal(answer.body);
    });

    it("a key left by a process that died before recording anything runs the operation once on retry", async function () {
      const key = `crash-nothing-${tag}`;
      const text = body("nothing");
      // What a process killed before its write leaves behind: the claim, no write, its lease run out.
      await driver.core.pool.query(
        `INSERT INTO idempotency_keys (caller, key, fingerprint, state, locked_until) VALUES ($1, $2, $3, 'IN_PROGRESS', now() - interval '1 second')`,
        [`applicant:${applicantId}`, key, fingerprint("POST", "/api/v1/requests", text)],
      );
      const answer = await post(current().api.url, key, text);
      expect(answer.status, JSON.stringify(answer.body)).to.equal(201);
      expect(await requestsWith("nothing")).to.deep.equal([answer.body.requestId]);
    });

    /** Makes saving the answer of `key` fail (as a database error would) while `run` runs. */
    async function failingToSave<T>(key: string, run: () => Promise<T>): Promise<T> {
      const pool = driver.core.pool;
      await pool.query(`CREATE OR REPLACE FUNCTION fail_idempotency_store() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN IF NEW.key = '${key}' AND NEW.state = 'DONE' THEN RAISE EXCEPTION 'storage failure (test)'; END IF; RETURN NEW; END $$`);
      await pool.query(
        `CREATE TRIGGER fail_idempotency_store BEFORE UPDATE ON idempotency_keys FOR EACH ROW EXECUTE FUNCTION fail_idempotency_store()`,
      );
      try {
        return await run();
      } finally {
        await pool.query(`DROP TRIGGER fail_idempotency_store ON idempotency_keys`);
      }
    }

    it("a failure to save the answer never frees the key: the retry gets the original answer, not a second mint", async function () {
      const key = `crash-store-${tag}`;
      const text = body("store");
      expectError(await failingToSave(key, () => post(current().api.url, key, text)), 500);
      const created = await requestsWith("store");
      expect(created).to.have.length(1); // the mint happened, its answer was lost
      // At once: the process that lost its answer ended its lease.
      const answer = await attempt(postAs(applicant(key), "/requests", text), current().api.url);
      expect(answer.status, JSON.stringify(answer.body)).to.equal(201);
      expect(answer.body.requestId).to.equal(created[0]);
      expect(await requestsWith("store")).to.deep.equal(created);
    });

    it("a submission whose answer could not be saved: the retry gets the original answer, not a second submission", async function () {
      const requestId = await draft("submit-store", { plan: true });
      const key = `crash-submit-store-${tag}`;
      const submit = postAs(applicant(key), `/requests/${requestId}/submit`);
      expectError(await failingToSave(key, () => attempt(submit, current().api.url)), 500);
      const [written] = await writesOf(requestId, "SUBMIT");
      expect(written).to.deep.equal({ tx_hash: written.tx_hash, status: "CONFIRMED" }); // submitted, answer lost
      const answer = await attempt(submit, current().api.url);
      expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
      expect(answer.body).to.deep.include({
        requestId,
        status: "SUBMITTED",
        pendingDepartments: [code],
        transactionHash: written.tx_hash,
      });
      expect(await writesOf(requestId, "SUBMIT")).to.have.length(1);
    });

    it("fingerprints the method, the full target with its query string and the exact raw body", async function () {
      const key = `print-${tag}`;
      const text = body("print");
      expect((await post(current().api.url, key, text)).status).to.equal(201);
      const reordered = JSON.stringify({ requestType: "BUILDING_PERMIT", applicantId, metadata: { n: "print" } }); // same value, other bytes
      expectError(await post(current().api.url, key, reordered), 422);
      expectError(await post(current().api.url, key, text, "/requests?x=1"), 422);
      const replay = await post(current().api.url, key, text);
      expect(replay.status).to.equal(201);
      expect(replay.replayed).to.equal("true");
    });

    it("purges keys past their 24 h window (scheduled in the API process)", async function () {
      await driver.core.pool.query(
        `INSERT INTO idempotency_keys (caller, key, fingerprint, state, created_at) VALUES ('applicant:old', $1, 'x', 'DONE', now() - interval '25 hours')`,
        [`old-${tag}`],
      );
      expect(await new IdempotencyStore(driver.core.pool).purge()).to.be.at.least(1);
      expect(
        (await driver.core.pool.query(`SELECT 1 FROM idempotency_keys WHERE key = $1`, [`old-${tag}`])).rowCount,
      ).to.equal(0);
    });
  });

  describe("the audit trail", function () {
    const auditRows = async (entityType: string, entityId: string) =>
      (
        await driver.core.pool.query(
          `SELECT action, actor_type, actor_id, ip_address FROM audit_logs WHERE entity_type = $1 AND entity_id = $2 ORDER BY created_at`,
          [entityType, entityId],
        )
      ).rows;

    it("records creating and revoking OAuth clients, and client sign-ins", async function () {
      const { clientId, clientSecret } = await createClient(current().api.url, admin, `audited-${tag}`, [
        "documents:read",
      ]);
      await clientToken(current().api.url, clientId, clientSecret);
      const revoke = await fetch(`${current().api.url}/api/v1/admin/clients/${clientId}`, {
        method: "DELETE",
        headers: { authorization: `Bearer ${admin}` },
      });
      expect(revoke.status).to.equal(204);
      const rows = await auditRows("CLIENT", clientId);
      expect(rows.map((r) => r.action)).to.deep.equal(["CREATE", "SIGN_IN", "REVOKE"]);
      expect(rows[0]).to.include({ actor_type: "ADMIN", actor_id: current().admin.clientId });
      expect(rows[1]).to.include({ actor_type: "CLIENT", actor_id: clientId });
      // The bootstrap administrator's creation is on record too (written when the API first started).
      expect((await auditRows("CLIENT", current().admin.clientId)).map((r) => r.action)).to.include("CREATE");
    });

    it("records applicant sign-ins through the identity locker", async function () {
      const id = `signin-${tag}`;
      await applicantToken(current().api.url, { id });
      const rows = await auditRows("APPLICANT", id);
      expect(rows).to.have.length(1);
      expect(rows[0]).to.include({ action: "SIGN_IN", actor_type: "APPLICANT", actor_id: id });
    });

    it("takes the client address of audit rows from the trusted proxy hop (TRUST_PROXY_HOPS=1), not from what the caller wrote", async function () {
      const hooks = departmentClient(production.url, department);
      const created = await hooks.post(
        "/webhooks",
        { url: "https://93.184.216.34/audited", events: ["APPROVAL_REQUIRED"], secret },
        { "x-forwarded-for": "10.9.9.9, 198.51.100.23" },
      );
      expect(created.status).to.equal(201);
      const rows = await auditRows("WEBHOOK", created.body.webhookId);
      expect(rows[0].ip_address).to.equal("198.51.100.23"); // the hop our one proxy appended; the forged first entry is ignored
      await hooks.delete(`/webhooks/${created.body.webhookId}`);
    });

    it("with TRUST_PROXY_HOPS=2 the client is the address the outer proxy appended; a forged leftmost entry is ignored", async function () {
      // client → proxy A (appends the client's address) → proxy B (appends A's) → API: X-Forwarded-For ends "client, A".
      // Behind proxies: a production process (development conveniences are refused with TRUST_PROXY_HOPS).
      const twoHops = await current().startExtraApi(
        undefined,
        await productionEnv(current(), { TRUST_PROXY_HOPS: "2", RATE_LIMIT_PUBLIC_PER_MINUTE: "3" }),
      );
      try {
        const hooks = departmentClient(twoHops.url, department);
        const created = await hooks.post(
          "/webhooks",
          { url: "https://93.184.216.34/two-hops", events: ["APPROVAL_REQUIRED"], secret },
          { "x-forwarded-for": "10.9.9.9, 198.51.100.77, 192.0.2.10" },
        );
        expect(created.status, JSON.stringify(created.body)).to.equal(201);
        expect((await auditRows("WEBHOOK", created.body.webhookId))[0].ip_address).to.equal("198.51.100.77");
        await hooks.delete(`/webhooks/${created.body.webhookId}`);
        // The rate limit follows the same client, whatever it forges in front of it.
        const health = (forged: string, client: string) =>
          fetch(`${twoHops.url}/health`, { headers: { "x-forwarded-for": `${forged}, ${client}, 192.0.2.10` } });
        for (let i = 0; i < 3; i++) expect((await health(`10.0.0.${i}`, "198.51.100.78")).status).to.not.equal(429);
        expect((await health("10.0.0.99", "198.51.100.78")).status).to.equal(429);
        expect((await health("10.0.0.99", "198.51.100.79")).status).to.not.equal(429);
      } finally {
        await twoHops.stop();
      }
    });

    it("records the bootstrap admin client's creation, rotation and the revocation of the one it replaces", async function () {
      // The bootstrap of an API process, on a schema of its own (the fixture's administrator is left alone).
      const schema = `bootstrap_${tag.toLowerCase()}`;
      const pool = createPool(current().databaseUrl, schema, 2);
      const bootstrap = async (clientId: string, clientSecret: string) => {
        const config = loadConfig({
          ...current().env,
          API_DB_SCHEMA: schema,
          ADMIN_CLIENT_ID: clientId,
          ADMIN_CLIENT_SECRET: clientSecret,
        });
        await (await createAuth({ config, pool, logger: createLogger("silent") })).bootstrapAdmin();
      };
      try {
        await migrate(pool, schema);
        await bootstrap("boot-first", "first-secret-of-the-bootstrap-admin");
        await bootstrap("boot-first", "first-secret-of-the-bootstrap-admin"); // unchanged: nothing to record
        await bootstrap("boot-first", "second-secret-of-the-bootstrap-admin"); // rotated
        await bootstrap("boot-second", "third-secret-of-the-bootstrap-admin"); // replaces (revokes) the first
        const { rows } = await pool.query(
          `SELECT entity_id, action, actor_type, new_value FROM audit_logs WHERE entity_type = 'CLIENT' ORDER BY created_at`,
        );
        expect(rows).to.deep.equal([
          {
            entity_id: "boot-first",
            action: "CREATE",
            actor_type: "SYSTEM",
            new_value: { bootstrap: true, scopes: ["admin"] },
          },
          { entity_id: "boot-first", action: "ROTATE", actor_type: "SYSTEM", new_value: { bootstrap: true } },
          {
            entity_id: "boot-second",
            action: "CREATE",
            actor_type: "SYSTEM",
            new_value: { bootstrap: true, scopes: ["admin"] },
          },
          { entity_id: "boot-first", action: "REVOKE", actor_type: "SYSTEM", new_value: { replacedBy: "boot-second" } },
        ]);
        expect(JSON.stringify(rows)).to.not.include("secret-of-the-bootstrap-admin");
      } finally {
        await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        await pool.end();
      }
    });

    it("the API's database role can only read and add audit rows: no UPDATE, DELETE, TRUNCATE, nor touching the triggers", async function () {
      // The connection the stack's API processes use (the superuser stays with the supervisor and the indexer).
      const apiUrl = current().env.DATABASE_URL!;
      expect(new URL(apiUrl).username).to.equal("licence_api");
      const asApi = new pg.Client({
        connectionString: apiUrl,
        options: `-c search_path=${current().config.apiSchema}`,
      });
      await asApi.connect();
      try {
        /** Runs a statement in a transaction that is rolled back whatever happens; the error it raised, if any. */
        const attempt = async (sql: string) => {
          await asApi.query("BEGIN");
          try {
            await asApi.query(sql);
            return undefined;
          } catch (error) {
            return error as { code?: string; message: string };
          } finally {
            await asApi.query("ROLLBACK");
          }
        };
        for (const sql of [
          `UPDATE audit_logs SET action = 'FORGED'`,
          `DELETE FROM audit_logs`,
          `TRUNCATE audit_logs`,
          `ALTER TABLE audit_logs DISABLE TRIGGER audit_logs_no_update`,
          `ALTER TABLE audit_logs DISABLE TRIGGER ALL`,
          `DROP TRIGGER audit_logs_no_update ON audit_logs`,
          `DROP TRIGGER audit_logs_no_truncate ON audit_logs`,
          `CREATE OR REPLACE FUNCTION audit_logs_append_only() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$`,
          `ALTER TABLE audit_logs OWNER TO licence_api`,
          `ALTER TABLE audit_logs RENAME TO audit_logs_old`,
          `DROP TABLE audit_logs`,
          `DROP SCHEMA ${current().config.apiSchema} CASCADE`,
          `ALTER SCHEMA ${current().config.apiSchema} RENAME TO moved`,
        ]) {
          const error = await attempt(sql);
          expect(error?.code, `${sql}: ${error?.message ?? "accepted"}`).to.equal("42501"); // insufficient_privilege
        }
        // It still reads the trail and adds to it (each write's audit row is inserted in the write's transaction).
        expect((await asApi.query(`SELECT count(*)::int AS n FROM audit_logs`)).rows[0].n).to.be.greaterThan(0);
        expect(await auditTableWeakness(asApi, current().config.apiSchema)).to.equal(undefined);
      } finally {
        await asApi.end();
      }
      // The API (running as that role) still writes, with its audit row.
      const hooks = departmentClient(current().api.url, department);
      const created = await hooks.post("/webhooks", {
        url: `${receiver.url}/role`,
        events: ["APPROVAL_REQUIRED"],
        secret,
      });
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      expect((await auditRows("WEBHOOK", created.body.webhookId)).map((r) => r.action)).to.deep.equal(["CREATE"]);
      expect((await hooks.delete(`/webhooks/${created.body.webhookId}`)).status).to.equal(204);
      // What a production API reports at start-up when its role could rewrite the trail (an external DATABASE_URL
      // used as the superuser, say).
      expect(await auditTableWeakness(driver.core.pool, current().config.apiSchema)).to.match(/superuser/);
    });

    it("refuses TRUNCATE of the audit table, like UPDATE and DELETE", async function () {
      const error = await driver.core.pool.query(`TRUNCATE audit_logs`).then(
        () => undefined,
        (e: Error) => e,
      );
      expect(error?.message).to.match(/append-only/);
      expect((await driver.core.pool.query(`SELECT count(*)::int AS n FROM audit_logs`)).rows[0].n).to.be.greaterThan(
        0,
      );
    });
  });

  describe("quotas on request creation and a cap on metadata", function () {
    const applicantId = `quota-${tag}`;
    let asApplicant: ReturnType<typeof apiClient>;

    before(async function () {
      const code = `QUOTA_${tag}`;
      await createDepartment(current().api.url, admin, { code, name: "Quota" });
      await seedWorkflow(
        current(),
        driver,
        workflow("BUILDING_PERMIT", `Quota ${tag}`, stage("q", "Q", "SEQUENTIAL", { [code]: [] })),
      );
      asApplicant = apiClient(production.url, await lockerApplicantToken(current(), { id: applicantId }));
    });

    it("refuses metadata over 16 KiB with 400 METADATA_TOO_LARGE and creates nothing", async function () {
      const big = await asApplicant.post("/requests", {
        applicantId,
        requestType: "BUILDING_PERMIT",
        metadata: { notes: "x".repeat(17 * 1024) },
      });
      expectError(big, 400, "METADATA_TOO_LARGE");
      expect(big.body.details).to.include({ maxBytes: 16 * 1024 });
      expect(
        (await driver.core.pool.query(`SELECT count(*)::int AS n FROM requests WHERE applicant_id = $1`, [applicantId]))
          .rows[0].n,
      ).to.equal(0);
    });

    it("allows REQUEST_QUOTA_PER_DAY requests per applicant in 24 hours, then 429 QUOTA_EXCEEDED; others are not affected", async function () {
      for (let i = 0; i < 3; i++) {
        const created = await asApplicant.post("/requests", {
          applicantId,
          requestType: "BUILDING_PERMIT",
          metadata: { notes: "x".repeat(1024) },
        });
        expect(created.status, JSON.stringify(created.body)).to.equal(201);
      }
      const fourth = await asApplicant.post("/requests", { applicantId, requestType: "BUILDING_PERMIT" });
      expect(fourth.status).to.equal(429);
      expect(fourth.body).to.deep.include({ code: "QUOTA_EXCEEDED" });
      expect(
        (await driver.core.pool.query(`SELECT count(*)::int AS n FROM requests WHERE applicant_id = $1`, [applicantId]))
          .rows[0].n,
      ).to.equal(3);
      const other = apiClient(production.url, await lockerApplicantToken(current(), { id: `${applicantId}-other` }));
      expect(
        (await other.post("/requests", { applicantId: `${applicantId}-other`, requestType: "BUILDING_PERMIT" })).status,
      ).to.equal(201);
    });
  });

  describe("PDFs with JavaScript, launch actions, embedded files or XFA are flagged (or refused)", function () {
    const code = `PDFS_${tag}`;
    const applicantId = `pdfs-${tag}`;
    let applicant: ReturnType<typeof apiClient>;
    let reviewer: ReturnType<typeof departmentClient>;
    let requestId: string;
    const documents: Record<string, string> = {};
    const withObject = (label: string, object: string | Buffer) =>
      Buffer.concat([
        pdf(`${label} ${tag}`),
        Buffer.from("\n"),
        Buffer.isBuffer(object) ? object : Buffer.from(object),
      ]);
    const compressed = (dictionary: string) => {
      const data = deflateSync(Buffer.from(dictionary));
      return Buffer.concat([
        Buffer.from(`12 0 obj <</Type/ObjStm/N 1/First 0/Length ${data.length}/Filter/FlateDecode>>stream\n`),
        data,
        Buffer.from("\nendstream endobj\n"),
      ]);
    };

    before(async function () {
      const api = current().api.url;
      reviewer = departmentClient(api, await createDepartment(api, admin, { code, name: "PDF reviewers" }));
      await seedWorkflow(
        current(),
        driver,
        workflow(
          "BUILDING_PERMIT",
          `PDFs ${tag}`,
          stage("p", "P", "SEQUENTIAL", { [code]: ["JS_DOC", "LAUNCH_DOC", "EMBED_DOC", "CLEAN_DOC"] }),
        ),
      );
      applicant = apiClient(api, await applicantToken(api, { id: applicantId }));
      requestId = (await applicant.post("/requests", { applicantId, requestType: "BUILDING_PERMIT" })).body.requestId;
    });

    const cases: [string, () => Buffer, string[]][] = [
      [
        "JS_DOC",
        () => withObject("js", "9 0 obj <</Type/Catalog/OpenAction <</S/JavaScript/JS(app.alert(1))>>>> endobj"),
        ["JAVASCRIPT", "OPEN_ACTION"],
      ],
      ["LAUNCH_DOC", () => withObject("launch", compressed("<</Type/Action/S/Launch/F(cmd.exe)>>")), ["LAUNCH_ACTION"]],
      [
        "EMBED_DOC",
        () => withObject("embed", "10 0 obj <</Names <</EmbeddedF#69les 11 0 R>>/AcroForm <</XFA 13 0 R>>>> endobj"),
        ["EMBEDDED_FILE", "XFA"],
      ],
      ["CLEAN_DOC", () => pdf(`clean ${tag}`), []],
    ];
    for (const [docType, file, expected] of cases) {
      it(`${docType}: accepted and stored with its finding ${JSON.stringify(expected)}`, async function () {
        const uploaded = await applicant.upload("POST", `/requests/${requestId}/documents`, file(), `${docType}.pdf`, {
          docType,
        });
        expect(uploaded.status, JSON.stringify(uploaded.body)).to.equal(201);
        documents[docType] = uploaded.body.documentId;
        const { rows } = await driver.core.pool.query(
          `SELECT active_content FROM document_versions WHERE document_id = $1`,
          [uploaded.body.documentId],
        );
        expect(rows[0].active_content).to.deep.equal(expected);
      });
    }

    it("shows each version's findings to the reviewing department in the document detail", async function () {
      expect((await applicant.post(`/requests/${requestId}/submit`)).status).to.equal(200);
      for (const [docType, , expected] of cases) {
        const detail = await reviewer.get(`/documents/${documents[docType]}`);
        expect(detail.status, docType).to.equal(200);
        expect(detail.body.versions[0].activeContent, docType).to.deep.equal(expected);
      }
    });

    it("refuses them where REFUSE_ACTIVE_PDF=true (400 INVALID_FILE, reason ACTIVE_CONTENT), storing nothing", async function () {
      const other = await applicant.post("/requests", { applicantId, requestType: "BUILDING_PERMIT" });
      const onProduction = apiClient(production.url, await lockerApplicantToken(current(), { id: applicantId }));
      const refused = await onProduction.upload(
        "POST",
        `/requests/${other.body.requestId}/documents`,
        withObject("refused", "9 0 obj <</S/JavaScript/JS(x)>> endobj"),
        "a.pdf",
        { docType: "JS_DOC" },
      );
      expect(refused.status).to.equal(400);
      expect(refused.body).to.deep.include({ code: "INVALID_FILE" });
      expect(refused.body.details).to.deep.equal({ reason: "ACTIVE_CONTENT", activeContent: ["JAVASCRIPT"] });
      expect(
        (
          await driver.core.pool.query(`SELECT count(*)::int AS n FROM documents WHERE request_id = $1`, [
            other.body.requestId,
          ])
        ).rows[0].n,
      ).to.equal(0);
    });
  });

  describe("PUBLIC_BASE_URL, security headers, webhook headers documented", function () {
    it("requires an https PUBLIC_BASE_URL in production", function () {
      expect(() => loadConfig({ NODE_ENV: "production" })).to.throw(
        /PUBLIC_BASE_URL is required in production and must be https/,
      );
      expect(() => loadConfig({ NODE_ENV: "production", PUBLIC_BASE_URL: "http://licences.example.org" })).to.throw(
        /PUBLIC_BASE_URL is required in production and must be https/,
      );
      expect(() =>
        loadConfig({ NODE_ENV: "production", PUBLIC_BASE_URL: "https://licences.example.org" }),
      ).to.not.throw(/PUBLIC_BASE_URL/);
    });

    it("sends nosniff, Referrer-Policy and frame-ancestors everywhere, and no-store on API answers carrying credentials", async function () {
      const api = current().api.url;
      for (const target of [
        "/health",
        "/api/v1/verify/issuer",
        "/api/v1/requests/not-a-uuid",
        "/api/v1/openapi.json",
      ]) {
        const response = await fetch(`${api}${target}`);
        expect(response.headers.get("x-content-type-options"), target).to.equal("nosniff");
        expect(response.headers.get("referrer-policy"), target).to.equal("no-referrer");
        expect(response.headers.get("content-security-policy"), target).to.include("frame-ancestors 'none'");
      }
      // The verification page keeps its own strict policy.
      expect((await fetch(`${api}/verify`)).headers.get("content-security-policy")).to.include("script-src 'self'");
      const created = await fetch(`${api}/api/v1/departments`, {
        method: "POST",
        headers: { authorization: `Bearer ${admin}`, "content-type": "application/json" },
        body: JSON.stringify({ code: `HDR_${tag}`, name: "Headers" }),
      });
      expect(created.status).to.equal(201);
      expect(created.headers.get("cache-control")).to.equal("no-store");
      expect(((await created.json()) as Json).apiKey).to.be.a("string");
    });

    it("serves /docs under a CSP that still lets the page render the OpenAPI document (real browser)", async function () {
      const response = await fetch(`${current().api.url}/docs`);
      const csp = response.headers.get("content-security-policy") ?? "";
      // Only this origin's resources, no inline script, never framed.
      expect(csp).to.match(/default-src 'self'.*script-src 'self'.*connect-src 'self'.*frame-ancestors 'none'/);
      expect(csp).to.not.include("unsafe-inline");
      const browser = await chromium.launch({
        executablePath: await ensureChromium(),
        headless: true,
        args: [
          "--no-sandbox",
          "--disable-gpu",
          "--no-first-run",
          "--disable-background-networking",
          "--disable-component-update",
          "--disable-sync",
        ],
      });
      try {
        const page = await browser.newPage();
        const violations: string[] = [];
        page.on(
          "console",
          (message) => /Content Security Policy/i.test(message.text()) && violations.push(message.text()),
        );
        await page.goto(`${current().api.url}/docs`);
        await page.waitForSelector(".opblock", { timeout: 20_000 });
        expect(await page.locator(".opblock").count()).to.be.greaterThan(20);
        expect(violations).to.deep.equal([]);
      } finally {
        await browser.close();
      }
    });

    it("documents both webhook signatures (X-Webhook-Signature and the Standard Webhooks headers) in the OpenAPI description", async function () {
      const document = (await (await fetch(`${current().api.url}/api/v1/openapi.json`)).json()) as Json;
      const text = JSON.stringify(document);
      for (const header of ["X-Webhook-Signature", "webhook-id", "webhook-timestamp", "webhook-signature"])
        expect(text, header).to.include(header);
      expect(document.paths["/api/v1/webhooks"].post.description).to.match(/webhook-timestamp within a tolerance/);
    });
  });
});
