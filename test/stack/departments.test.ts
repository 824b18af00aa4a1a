import { expect } from "chai";
import { Wallet, ZeroHash, encodeBytes32String } from "ethers";
import { approvalRegistry } from "../../api/src/chain/contracts.ts";
import { signatureHeaders } from "../../api/src/auth/requestSigning.ts";
import type { ApiHandle } from "../../scripts/stack/stack.ts";
import { applicantToken, clientToken, createClient } from "./support/authClient.ts";
import { createDepartment, departmentClient, type CreatedTestDepartment } from "./support/departmentClient.ts";
import {
  b32,
  createDriver,
  documents,
  registry,
  sha,
  token,
  uuidBytes,
  type Driver,
} from "./support/platformDriver.ts";
import { productionEnv } from "./support/productionEnv.ts";
import { current } from "./support/stackFixture.ts";
import { apiClient as client, type Json, expectError } from "./support/httpClient.ts";
import { letters } from "./support/sessions.ts";

/** Department codes are upper-case letters and underscores only: the run id in letters. */
const run = letters(String(Date.now() % 1e8));
const code = (name: string) => `${name}_${run}`;
const now = () => Math.floor(Date.now() / 1000);

describe("departments (HTTP, real stack)", function () {
  let api: string;
  let driver: Driver;
  let admin: ReturnType<typeof client>;
  let adminToken: string;
  let fire: CreatedTestDepartment;
  let police: CreatedTestDepartment;

  const onChain = async (departmentCode: string) => {
    const data = approvalRegistry.encodeFunctionData("departmentByCode", [encodeBytes32String(departmentCode)]);
    const [departmentId, wallet, active] = approvalRegistry.decodeFunctionResult(
      "departmentByCode",
      await driver.core.provider.call({ to: current().deployment.contracts.ApprovalRegistry, data }),
    );
    return { departmentId: Number(departmentId), wallet: wallet as string, active: active as boolean };
  };
  const auditOf = async (departmentCode: string, action: string) =>
    (
      await driver.core.pool.query(
        `SELECT actor_type, old_value, new_value, tx_hash FROM audit_logs WHERE entity_type = 'DEPARTMENT' AND entity_id = $1 AND action = $2 ORDER BY created_at`,
        [departmentCode, action],
      )
    ).rows;

  before(async function () {
    const stack = current();
    api = stack.api.url;
    driver = await createDriver(stack);
    adminToken = await clientToken(api, stack.admin.clientId, stack.admin.clientSecret, "admin");
    admin = client(api, adminToken);
    fire = await createDepartment(api, adminToken, { code: code("FIRE"), name: "Fire and Rescue" });
    police = await createDepartment(api, adminToken, { code: code("POLICE"), name: "Police" });
  });
  after(async () => driver?.close());

  describe("registration", function () {
    it("registers code ↔ a new custodial wallet on chain and shows the API key and secret once", async function () {
      const response = await admin.post("/departments", {
        code: code("HEALTH"),
        name: "Health",
        webhookUrl: "https://93.184.216.34/health-hooks",
      });
      expect(response.status).to.equal(201);
      const body = response.body;
      expect(body).to.include({
        code: code("HEALTH"),
        name: "Health",
        webhookUrl: "https://93.184.216.34/health-hooks",
        isActive: true,
        requireSignedRequests: false,
      });
      expect(body.apiKey).to.match(/^ldk_[A-Za-z0-9_-]{43}$/);
      expect(body.apiSecret).to.match(/^lds_[A-Za-z0-9_-]{43}$/);
      expect(body.walletAddress).to.match(/^0x[0-9a-fA-F]{40}$/);
      expect(new Date(body.createdAt).getTime()).to.be.closeTo(Date.now(), 60_000);
      expect((await driver.core.provider.getTransactionReceipt(body.transactionHash))?.status).to.equal(1);

      const registered = await onChain(code("HEALTH"));
      expect(registered.wallet).to.equal(body.walletAddress);
      expect(registered.active).to.equal(true);
      const { rows } = await driver.core.pool.query(`SELECT purpose, label FROM wallets WHERE address = $1`, [
        body.walletAddress.toLowerCase(),
      ]);
      expect(rows[0]).to.deep.equal({ purpose: "DEPARTMENT", label: code("HEALTH") });

      // Credentials are stored only as a hash and a sealed secret; never in the audit trail.
      const stored = await driver.core.pool.query(
        `SELECT api_key_hash, api_secret_sealed FROM departments WHERE code = $1`,
        [code("HEALTH")],
      );
      expect(stored.rows[0].api_key_hash).to.match(/^sha256:[0-9a-f]{64}$/);
      expect(stored.rows[0].api_secret_sealed.toString("latin1")).not.to.include(body.apiSecret);
      const [created] = await auditOf(code("HEALTH"), "CREATE");
      expect(created.actor_type).to.equal("ADMIN");
      expect(created.tx_hash).to.equal(body.transactionHash);
      expect(created.new_value).to.include({ code: code("HEALTH"), name: "Health", walletAddress: body.walletAddress });
      expect(JSON.stringify(created)).not.to.include(body.apiKey).and.not.to.include(body.apiSecret);
    });

    it("accepts a 31-character code and refuses invalid codes and bodies with 400", async function () {
      const longest = `LONG_${run}_${"Z".repeat(31)}`.slice(0, 31);
      expect((await admin.post("/departments", { code: longest, name: "Longest" })).status).to.equal(201);
      for (const bad of ["fire", "FIRE1", "FIRE-DEPT", "", `${longest}Z`, "FIRE DEPT"]) {
        const response = await admin.post("/departments", { code: bad, name: "Bad" });
        expect(response.status, bad).to.equal(400);
        expect(response.body.code).to.equal("VALIDATION_ERROR");
      }
      expectError(await admin.post("/departments", { code: code("NONAME") }), 400);
      expectError(await admin.post("/departments", { code: code("BADHOOK"), name: "x", webhookUrl: "not a url" }), 400);
      expect(
        (await admin.post("/departments", { code: code("FTPHOOK"), name: "x", webhookUrl: "ftp://example.org/x" }))
          .status,
      ).to.equal(400);
      expectError(await admin.get(`/departments/${code("NONAME")}`), 404);
    });

    it("refuses a duplicate code with 409 CONFLICT, also when the code was registered on chain outside the API", async function () {
      expectError(await admin.post("/departments", { code: fire.code, name: "Fire again" }), 409, "CONFLICT");
      await driver.department(code("OUTSIDE"));
      expectError(await admin.post("/departments", { code: code("OUTSIDE"), name: "Outside" }), 409, "CONFLICT");
      // Concurrent registrations of one code: exactly one wins.
      const burst = await Promise.all(
        [1, 2, 3].map(() => admin.post("/departments", { code: code("RACE"), name: "Race" })),
      );
      expect(burst.map((r) => r.status).sort()).to.deep.equal([201, 409, 409]);
    });

    it("is for administrators only", async function () {
      expectError(await client(api).post("/departments", { code: code("ANON"), name: "x" }), 401);
      const applicant = client(api, await applicantToken(api, { id: `dept-applicant-${run}` }));
      expectError(await applicant.post("/departments", { code: code("APPL"), name: "x" }), 403);
      expectError(await departmentClient(api, fire).post("/departments", { code: code("BYDEPT"), name: "x" }), 403);
    });
  });

  describe("reading", function () {
    it("lists and shows departments to applicants, readers, departments and administrators", async function () {
      const reader = await createClient(api, adminToken, `dept-reader-${run}`, ["applications:read"]);
      const callers = [
        admin,
        client(api, await applicantToken(api, { id: `dept-reader-applicant-${run}` })),
        client(api, await clientToken(api, reader.clientId, reader.clientSecret, "applications:read")),
        departmentClient(api, police),
      ];
      for (const caller of callers) {
        const list = await caller.get("/departments");
        expect(list.status).to.equal(200);
        const mine = list.body.departments.find((d: Json) => d.code === fire.code);
        expect(mine).to.deep.equal({
          code: fire.code,
          name: "Fire and Rescue",
          walletAddress: fire.walletAddress,
          custody: "CUSTODIAL",
          pendingWalletChange: null,
          isActive: true,
          createdAt: fire.body.createdAt,
          // Only administrators (and the department itself) see where it is notified and whether it must sign.
          ...(caller === admin ? { webhookUrl: null, requireSignedRequests: false } : {}),
        });
        expect(mine).not.to.have.any.keys("apiKey", "apiSecret");
        const one = await caller.get(`/departments/${fire.code}`);
        expect(one.status).to.equal(200);
        expect(one.body).to.deep.equal(mine);
      }
      expectError(await admin.get(`/departments/NOPE_${run}`), 404);
      expectError(await client(api).get("/departments"), 401);
      // A department registered on chain outside the API has no name or credentials here: not listed.
      expect((await admin.get("/departments")).body.departments.map((d: Json) => d.code)).not.to.include(
        code("OUTSIDE"),
      );
    });

    it("shows webhookUrl and requireSignedRequests only to administrators and the department itself", async function () {
      const hooked = await createDepartment(api, adminToken, {
        code: code("HOOKED"),
        name: "Hooked",
        webhookUrl: "http://127.0.0.1:9/hooked",
      });
      const applicant = client(api, await applicantToken(api, { id: `dept-hidden-applicant-${run}` }));
      const reader = await createClient(api, adminToken, `dept-hidden-reader-${run}`, ["applications:read"]);
      for (const [who, caller] of [
        ["administrator", admin],
        ["the department itself", departmentClient(api, hooked)],
      ] as const) {
        const one = await caller.get(`/departments/${hooked.code}`);
        expect(one.body, who).to.include({ webhookUrl: "http://127.0.0.1:9/hooked", requireSignedRequests: false });
      }
      for (const [who, caller] of [
        ["an applicant", applicant],
        [
          "a reader client",
          client(api, await clientToken(api, reader.clientId, reader.clientSecret, "applications:read")),
        ],
        ["another department", departmentClient(api, police)],
      ] as const) {
        const one = await caller.get(`/departments/${hooked.code}`);
        expect(one.status, who).to.equal(200);
        expect(one.body, who).to.include({ code: hooked.code, name: "Hooked" });
        expect(one.body, who).not.to.have.any.keys("webhookUrl", "requireSignedRequests");
        const listed = (await caller.get("/departments")).body.departments.find((d: Json) => d.code === hooked.code);
        expect(listed, who).not.to.have.any.keys("webhookUrl", "requireSignedRequests");
        expect(JSON.stringify((await caller.get("/departments")).body), who).not.to.include("127.0.0.1:9/hooked");
      }
    });

    it("lets a department read its own record with its key; a wrong key or code is 401", async function () {
      const self = await departmentClient(api, fire).get(`/departments/${fire.code}`);
      expect(self.status).to.equal(200);
      expect(self.body.code).to.equal(fire.code);
      const wrongKey = await departmentClient(api, { ...fire, apiKey: police.apiKey }).get(`/departments/${fire.code}`);
      expectError(wrongKey, 401, "UNAUTHORIZED");
      expectError(await departmentClient(api, { ...fire, code: `NOPE_${run}` }).get("/departments"), 401);
      expectError(await departmentClient(api, { ...fire, code: "" }).get("/departments"), 401);
    });
  });

  describe("updating", function () {
    it("changes name and webhookUrl (audited with old and new values)", async function () {
      const response = await admin.patch(`/departments/${police.code}`, {
        name: "State Police",
        webhookUrl: "https://93.184.216.34/police-hook",
      });
      expect(response.status).to.equal(200);
      expect(response.body).to.include({
        code: police.code,
        name: "State Police",
        webhookUrl: "https://93.184.216.34/police-hook",
        isActive: true,
      });
      expect((await admin.get(`/departments/${police.code}`)).body.name).to.equal("State Police");
      const [update] = await auditOf(police.code, "UPDATE");
      expect(update.old_value).to.deep.equal({ name: "Police", webhookUrl: null });
      expect(update.new_value).to.deep.equal({ name: "State Police", webhookUrl: "https://93.184.216.34/police-hook" });
      const cleared = await admin.patch(`/departments/${police.code}`, { webhookUrl: null });
      expect(cleared.body.webhookUrl).to.equal(null);
      expectError(await admin.patch(`/departments/${police.code}`, {}), 400);
      expectError(await admin.patch(`/departments/${police.code}`, { webhookUrl: "nope" }), 400);
      expectError(await admin.patch(`/departments/NOPE_${run}`, { name: "x" }), 404);
    });

    it("in production, refuses an internal webhookUrl (INVALID_WEBHOOK_URL naming the field) at registration and update", async function () {
      const production = await current().startExtraApi(undefined, await productionEnv(current()));
      try {
        const asAdmin = client(production.url, adminToken);
        for (const url of [
          "http://127.0.0.1:9/x",
          "http://localhost/x",
          "http://10.1.2.3/x",
          "http://169.254.169.254/latest/meta-data",
          "http://[::1]/x",
          "http://[::ffff:192.168.0.1]/x",
        ]) {
          const created = await asAdmin.post("/departments", {
            code: code("INTERNAL"),
            name: "Internal",
            webhookUrl: url,
          });
          expect(created.status, url).to.equal(400);
          expect(created.body.code, url).to.equal("INVALID_WEBHOOK_URL");
          expect(created.body.details.field, url).to.equal("webhookUrl");
          const patched = await asAdmin.patch(`/departments/${police.code}`, { webhookUrl: url });
          expect(patched.status, url).to.equal(400);
          expect(patched.body).to.deep.include({ code: "INVALID_WEBHOOK_URL" });
        }
        // Nothing was registered or changed.
        expectError(await admin.get(`/departments/${code("INTERNAL")}`), 404);
        expect((await admin.get(`/departments/${police.code}`)).body.webhookUrl).to.equal(null);
        // A public address is accepted there.
        const accepted = await asAdmin.patch(`/departments/${police.code}`, { webhookUrl: "https://93.184.216.34/p" });
        expect(accepted.status).to.equal(200);
        expect((await admin.patch(`/departments/${police.code}`, { webhookUrl: null })).status).to.equal(200);
      } finally {
        await production.stop();
      }
    });

    it("refuses non-administrators with 403", async function () {
      const applicant = client(api, await applicantToken(api, { id: `dept-patcher-${run}` }));
      expectError(await applicant.patch(`/departments/${police.code}`, { name: "Hacked" }), 403);
      expectError(await departmentClient(api, police).patch(`/departments/${police.code}`, { name: "Hacked" }), 403);
      expectError(await departmentClient(api, police).post(`/departments/${police.code}/regenerate-api-key`), 403);
      expect((await admin.get(`/departments/${police.code}`)).body.name).to.equal("State Police");
    });

    it("deactivates on chain: the key is refused at once; reactivation restores it", async function () {
      const dept = await createDepartment(api, adminToken, { code: code("TOGGLE"), name: "Toggle" });
      const asDept = departmentClient(api, dept);
      expect((await asDept.get(`/departments/${dept.code}`)).status).to.equal(200);

      const off = await admin.patch(`/departments/${dept.code}`, { isActive: false });
      expect(off.status).to.equal(200);
      expect(off.body.isActive).to.equal(false);
      expect((await onChain(dept.code)).active).to.equal(false);
      expectError(await asDept.get(`/departments/${dept.code}`), 401, "UNAUTHORIZED");
      expect((await admin.get(`/departments/${dept.code}`)).body.isActive).to.equal(false);
      expect(
        (await admin.get("/departments")).body.departments.find((d: Json) => d.code === dept.code).isActive,
      ).to.equal(false);
      const [deactivated] = await auditOf(dept.code, "DEACTIVATE");
      expect(deactivated.old_value).to.deep.equal({ isActive: true });
      expect(deactivated.new_value).to.deep.equal({ isActive: false });
      expect(deactivated.tx_hash).to.match(/^0x[0-9a-f]{64}$/);

      const on = await admin.patch(`/departments/${dept.code}`, { isActive: true, name: "Toggled" });
      expect(on.status).to.equal(200);
      expect(on.body).to.include({ isActive: true, name: "Toggled" });
      expect((await onChain(dept.code)).active).to.equal(true);
      expect((await asDept.get(`/departments/${dept.code}`)).status).to.equal(200);
      expect(await auditOf(dept.code, "ACTIVATE")).to.have.length(1);
      // Same value again: nothing sent to the chain, nothing audited.
      expect((await admin.patch(`/departments/${dept.code}`, { isActive: true })).status).to.equal(200);
      expect(await auditOf(dept.code, "ACTIVATE")).to.have.length(1);
    });

    it("regenerates the API key and secret: the old key fails from that moment, the new one works", async function () {
      const dept = await createDepartment(api, adminToken, { code: code("ROTATE"), name: "Rotate" });
      const response = await admin.post(`/departments/${dept.code}/regenerate-api-key`);
      expect(response.status).to.equal(200);
      expect(response.body).to.have.keys("apiKey", "apiSecret", "keyRotatedAt");
      expect(response.body.apiKey).not.to.equal(dept.apiKey);
      expectError(await departmentClient(api, dept).get(`/departments/${dept.code}`), 401);
      const renewed = { code: dept.code, apiKey: response.body.apiKey, apiSecret: response.body.apiSecret };
      expect((await departmentClient(api, renewed).get(`/departments/${dept.code}`)).status).to.equal(200);
      // The new secret signs; the old one no longer does.
      expect((await departmentClient(api, renewed, { sign: true }).get(`/departments/${dept.code}`)).status).to.equal(
        200,
      );
      expect(
        (
          await departmentClient(api, { ...renewed, apiSecret: dept.apiSecret }, { sign: true }).get(
            `/departments/${dept.code}`,
          )
        ).status,
      ).to.equal(401);
      const [regenerated] = await auditOf(dept.code, "REGENERATE_KEY");
      expect(regenerated.new_value.keyRotatedAt).to.equal(response.body.keyRotatedAt);
      expect(JSON.stringify(regenerated))
        .not.to.include(response.body.apiKey)
        .and.not.to.include(response.body.apiSecret);
      expectError(await admin.post(`/departments/NOPE_${run}/regenerate-api-key`), 404);
    });
  });

  describe("statistics", function () {
    it("a department reads its own (zeros before any request), not another's; an administrator reads any", async function () {
      const own = await departmentClient(api, fire).get(`/departments/${fire.code}/stats`);
      expect(own.status).to.equal(200);
      const today = new Date().toISOString().slice(0, 10);
      expect(own.body).to.deep.equal({
        departmentCode: fire.code,
        period: { startDate: fire.body.createdAt.slice(0, 10), endDate: today },
        stats: { totalReceived: 0, approved: 0, rejected: 0, pending: 0, avgProcessingTimeDays: 0 },
      });
      expectError(await departmentClient(api, fire).get(`/departments/${police.code}/stats`), 403, "FORBIDDEN");
      const byAdmin = await admin.get(`/departments/${police.code}/stats?startDate=2024-01-01&endDate=2024-12-31`);
      expect(byAdmin.status).to.equal(200);
      expect(byAdmin.body.period).to.deep.equal({ startDate: "2024-01-01", endDate: "2024-12-31" });
      expectError(await admin.get(`/departments/${police.code}/stats?startDate=2024-12-31&endDate=2024-01-01`), 400);
      expectError(await admin.get(`/departments/${police.code}/stats?startDate=yesterday`), 400);
      expectError(await admin.get(`/departments/NOPE_${run}/stats`), 404);
      const applicant = client(api, await applicantToken(api, { id: `dept-stats-${run}` }));
      expectError(await applicant.get(`/departments/${fire.code}/stats`), 403);
    });

    it("count routed, pending (turn-aware), approved and rejected reviews from the index", async function () {
      // Workflow: stage 1 SEQUENTIAL [A, B], stage 2 PARALLEL [C, D]; decisions sent on chain by the departments' wallets.
      const depts = [] as CreatedTestDepartment[];
      for (const name of ["STATS_A", "STATS_B", "STATS_C", "STATS_D"])
        depts.push(await createDepartment(api, adminToken, { code: code(name), name }));
      const type = code("STATS_PERMIT");
      await driver.workflow(type, [depts[0].code, depts[1].code], [depts[2].code, depts[3].code]);
      const request = async (n: number) => {
        const tokenId = BigInt(1_000_000 + Math.floor(Math.random() * 400_000));
        await driver.send(
          "MINT_NFT",
          driver.operator,
          "LicenceToken",
          token.encodeFunctionData("mint", [Wallet.createRandom().address, tokenId, b32(type), ZeroHash]),
        );
        await driver.send(
          "DOC_UPDATE",
          driver.operator,
          "DocumentRegistry",
          documents.encodeFunctionData("anchorDocument", [
            tokenId,
            uuidBytes(n),
            b32("SITE_PLAN"),
            sha(`${run}-stats-${n}`),
          ]),
        );
        await driver.send(
          "SUBMIT",
          driver.operator,
          "ApprovalRegistry",
          registry.encodeFunctionData("submit", [tokenId]),
        );
        return tokenId;
      };
      const decide = async (i: number, fn: "approve" | "reject", tokenId: bigint) =>
        driver.decide(depts[i].code, depts[i].walletAddress, tokenId, {
          mask: 1,
          remarks: fn === "approve" ? "ok" : "no",
          decision: fn === "approve" ? 1 : 2,
          reasonCode: fn === "approve" ? 0 : 1,
        });
      const stats = async (i: number) => {
        const response = await departmentClient(api, depts[i]).get(`/departments/${depts[i].code}/stats`);
        expect(response.status).to.equal(200);
        return response.body.stats as Json;
      };
      const daysBetweenStageStartAndDecision = async (decisionTx: string) => {
        const { rows } = await driver.index.query(
          `SELECT a.timestamp - (SELECT max(s.timestamp) FROM stage_events s WHERE s.token_id = a.token_id AND s.stage = a.stage AND s.event_type = 'StageStarted') AS seconds
           FROM approvals a WHERE a.tx_hash = $1`,
          [decisionTx],
        );
        return Number(rows[0].seconds) / 86_400;
      };

      const first = await request(1);
      expect(await stats(0)).to.deep.equal({
        totalReceived: 1,
        approved: 0,
        rejected: 0,
        pending: 1,
        avgProcessingTimeDays: 0,
      });
      // B is listed after A in a sequential stage: not its turn yet.
      expect(await stats(1)).to.deep.equal({
        totalReceived: 1,
        approved: 0,
        rejected: 0,
        pending: 0,
        avgProcessingTimeDays: 0,
      });
      expect((await stats(2)).pending).to.equal(0);

      const approval = await decide(0, "approve", first);
      expect(await stats(0)).to.deep.equal({
        totalReceived: 1,
        approved: 1,
        rejected: 0,
        pending: 0,
        avgProcessingTimeDays: Math.round((await daysBetweenStageStartAndDecision(approval.hash)) * 1000) / 1000,
      });
      expect((await stats(1)).pending).to.equal(1);
      await decide(1, "approve", first);
      expect(await stats(1)).to.include({ approved: 1, pending: 0 });
      // Stage 2 is parallel: both C and D are pending at once.
      expect((await stats(2)).pending).to.equal(1);
      expect((await stats(3)).pending).to.equal(1);

      const second = await request(2);
      await decide(0, "reject", second);
      expect(await stats(0)).to.include({ totalReceived: 2, approved: 1, rejected: 1, pending: 0 });
      // The rejection closed the second request: B never gets it.
      expect(await stats(1)).to.include({ totalReceived: 2, pending: 0 });

      // Outside the period: nothing.
      const past = await admin.get(`/departments/${depts[0].code}/stats?startDate=2020-01-01&endDate=2020-12-31`);
      expect(past.body.stats).to.deep.equal({
        totalReceived: 0,
        approved: 0,
        rejected: 0,
        pending: 0,
        avgProcessingTimeDays: 0,
      });
    });
  });

  describe("signed requests", function () {
    let signer: CreatedTestDepartment;
    before(async function () {
      signer = await createDepartment(api, adminToken, {
        code: code("SIGNER"),
        name: "Signer",
        requireSignedRequests: true,
      });
    });

    const target = (route: string) => `/api/v1${route}`;
    const raw = (route: string, method: string, headers: Record<string, string>, body?: string) =>
      fetch(`${api}${target(route)}`, {
        method,
        headers: {
          "x-api-key": signer.apiKey,
          "x-department-code": signer.code,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
          ...headers,
        },
        body,
      }).then(async (r) => ({ status: r.status, body: (await r.json()) as Json }));

    it("are required for a department registered with requireSignedRequests; a valid one is accepted", async function () {
      expect(signer.body.requireSignedRequests).to.equal(true);
      const unsigned = await departmentClient(api, signer).get(`/departments/${signer.code}`);
      expect(unsigned.status).to.equal(401);
      expect(unsigned.body.message).to.match(/sign/i);
      const signed = departmentClient(api, signer, { sign: true });
      expect((await signed.get(`/departments/${signer.code}`)).status).to.equal(200);
      expect((await signed.get(`/departments/${signer.code}/stats?startDate=2024-01-01`)).status).to.equal(200);
      expect((await signed.get("/departments")).status).to.equal(200);
    });

    it("refuse a stale or future timestamp (more than 5 minutes off)", async function () {
      const route = `/departments/${signer.code}`;
      for (const timestamp of [now() - 301, now() + 301]) {
        const response = await raw(
          route,
          "GET",
          signatureHeaders(signer.apiSecret, "GET", target(route), undefined, { timestamp }),
        );
        expect(response.status).to.equal(401);
        expect(response.body.message).to.match(/5 minutes/);
      }
      // 4 minutes old is still fine.
      expect(
        (
          await raw(
            route,
            "GET",
            signatureHeaders(signer.apiSecret, "GET", target(route), undefined, { timestamp: now() - 240 }),
          )
        ).status,
      ).to.equal(200);
    });

    it("refuse a replayed signature; a nonce keeps identical requests distinct", async function () {
      const route = `/departments/${signer.code}`;
      const headers = signatureHeaders(signer.apiSecret, "GET", target(route));
      expect((await raw(route, "GET", headers)).status).to.equal(200);
      const replay = await raw(route, "GET", headers);
      expect(replay.status).to.equal(401);
      expect(replay.body.message).to.match(/already used/);
      const { rows } = await driver.core.pool.query(
        `SELECT count(*)::int AS n FROM department_request_signatures WHERE department_code = $1 AND signature = $2`,
        [signer.code, headers["x-signature"]],
      );
      expect(rows[0].n).to.equal(1);
      // The same request, same second, other nonces: both accepted. Without a nonce the second is a replay.
      const timestamp = now();
      expect(
        (await raw(route, "GET", signatureHeaders(signer.apiSecret, "GET", target(route), undefined, { timestamp })))
          .status,
      ).to.equal(200);
      expect(
        (await raw(route, "GET", signatureHeaders(signer.apiSecret, "GET", target(route), undefined, { timestamp })))
          .status,
      ).to.equal(200);
      const bare = signatureHeaders(signer.apiSecret, "GET", target(route), undefined, { timestamp, nonce: "" });
      expect(bare).not.to.have.property("x-nonce");
      expect((await raw(route, "GET", bare)).status).to.equal(200);
      expectError(await raw(route, "GET", { ...bare }), 401);
      // A nonce is part of what is signed.
      const withNonce = signatureHeaders(signer.apiSecret, "GET", target(route), undefined, { nonce: "abc" });
      expectError(await raw(route, "GET", { ...withNonce, "x-nonce": "abd" }), 401);
      expectError(await raw(route, "GET", { ...withNonce, "x-nonce": "bad nonce!" }), 401);
    });

    it("refuse a tampered path, query or method", async function () {
      const signedFor = signatureHeaders(signer.apiSecret, "GET", target(`/departments/${signer.code}`));
      expectError(await raw(`/departments/${fire.code}`, "GET", signedFor), 401);
      const statsSigned = signatureHeaders(
        signer.apiSecret,
        "GET",
        target(`/departments/${signer.code}/stats?startDate=2024-01-01`),
      );
      expect((await raw(`/departments/${signer.code}/stats?startDate=2025-01-01`, "GET", statsSigned)).status).to.equal(
        401,
      );
      const asPost = signatureHeaders(signer.apiSecret, "POST", target(`/departments/${signer.code}`));
      expectError(await raw(`/departments/${signer.code}`, "GET", asPost), 401);
    });

    it("cover the JSON body: a tampered body is 401; the same value in other bytes is accepted", async function () {
      // Authentication comes before authorisation: a correctly signed POST /departments from a department is 403
      // (authenticated, not an administrator); a signature that does not match is 401.
      const route = "/departments";
      const value = { name: "Signed", code: code("NEVER") };
      const ok = await raw(
        route,
        "POST",
        signatureHeaders(signer.apiSecret, "POST", target(route), value),
        JSON.stringify(value),
      );
      expect(ok.status).to.equal(403);
      const tampered = await raw(
        route,
        "POST",
        signatureHeaders(signer.apiSecret, "POST", target(route), value),
        JSON.stringify({ ...value, name: "Changed" }),
      );
      expect(tampered.status).to.equal(401);
      // Keys in another order and whitespace: the canonical JSON is the same.
      const pretty = `{\n  "name": "Signed",\n  "code": "${code("NEVER")}"\n}`;
      expectError(
        await raw(route, "POST", signatureHeaders(signer.apiSecret, "POST", target(route), value), pretty),
        403,
      );
      // A body signed as empty but sent with content is refused, and vice versa.
      expect(
        (await raw(route, "POST", signatureHeaders(signer.apiSecret, "POST", target(route)), JSON.stringify(value)))
          .status,
      ).to.equal(401);
      expectError(await raw(route, "POST", signatureHeaders(signer.apiSecret, "POST", target(route), value)), 401);
      // Non-JSON bodies cannot be signed.
      const form = await fetch(`${api}${target(route)}`, {
        method: "POST",
        headers: {
          "x-api-key": signer.apiKey,
          "x-department-code": signer.code,
          "content-type": "application/x-www-form-urlencoded",
          ...signatureHeaders(signer.apiSecret, "POST", target(route)),
        },
        body: "a=1",
      });
      expect(form.status).to.equal(401);
    });

    it("refuse a wrong secret and malformed headers", async function () {
      const route = `/departments/${signer.code}`;
      expectError(await raw(route, "GET", signatureHeaders(police.apiSecret, "GET", target(route))), 401);
      expectError(await raw(route, "GET", { "x-timestamp": String(now()), "x-signature": "zz" }), 401);
      expectError(await raw(route, "GET", { "x-timestamp": "soon", "x-signature": "a".repeat(64) }), 401);
      expect(
        (
          await raw(route, "GET", {
            "x-signature": signatureHeaders(signer.apiSecret, "GET", target(route))["x-signature"],
          })
        ).status,
      ).to.equal(401);
    });

    it("are optional for a department without the flag, but verified when sent; the flag can be set by PATCH", async function () {
      const dept = await createDepartment(api, adminToken, { code: code("OPTIONAL"), name: "Optional" });
      const route = `/departments/${dept.code}`;
      expect((await departmentClient(api, dept).get(route)).status).to.equal(200);
      expect((await departmentClient(api, dept, { sign: true }).get(route)).status).to.equal(200);
      expectError(
        await departmentClient(api, { ...dept, apiSecret: police.apiSecret }, { sign: true }).get(route),
        401,
      );

      const flagged = await admin.patch(route, { requireSignedRequests: true });
      expect(flagged.body.requireSignedRequests).to.equal(true);
      expectError(await departmentClient(api, dept).get(route), 401);
      expect((await departmentClient(api, dept, { sign: true }).get(route)).status).to.equal(200);
      const [update] = await auditOf(dept.code, "UPDATE");
      expect(update.new_value).to.deep.equal({ requireSignedRequests: true });
    });

    describe("with REQUIRE_SIGNED_REQUESTS=true", function () {
      let strict: ApiHandle | undefined;
      after(async () => strict?.stop());

      it("every department must sign", async function () {
        strict = await current().startExtraApi(undefined, { REQUIRE_SIGNED_REQUESTS: "true" });
        const route = `/departments/${fire.code}`;
        const unsigned = await departmentClient(strict.url, fire).get(route);
        expect(unsigned.status).to.equal(401);
        expect((await departmentClient(strict.url, fire, { sign: true }).get(route)).status).to.equal(200);
        // The main API process still accepts it unsigned.
        expect((await departmentClient(api, fire).get(route)).status).to.equal(200);
      });
    });
  });
});
