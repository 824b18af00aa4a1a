/**
 * The auditor's tool (`node scripts/audit.ts`) as a child process against the real stack: it is given only the
 * RPC endpoint and the deployment file, and what it prints is checked against facts the test knows independently
 * (the SHA-256 of the files it uploaded, the wallets the departments were created with, direct contract calls).
 * Reference scenarios: an issued licence; one whose approval a new document version invalidated before it was
 * re-approved; a revoked one. Then --all, --json, wrong inputs, --compare against the API (agreeing) and against
 * a fake API that alters some answers (disagreeing, non-zero exit naming the fields), and a wallet rotation.
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { rm, writeFile } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { expect } from "chai";
import { Wallet, encodeBytes32String, type Result } from "ethers";
import { auditDecisions } from "../../scripts/audit/decisionAudit.ts";
import { DepartmentWallets } from "../../scripts/audit/departmentWallets.ts";
import type { ChainEvent } from "../../scripts/audit/logReader.ts";
import { REPO_ROOT } from "../../scripts/stack/stack.ts";
import { applicantToken, clientToken } from "./support/authClient.ts";
import { createDepartment, departmentClient } from "./support/departmentClient.ts";
import { eventually } from "./support/eventually.ts";
import { apiClient as httpClient, type Json } from "./support/httpClient.ts";
import { b32, createDriver, registry, token as tokenAbi, type Driver } from "./support/platformDriver.ts";
import { jpeg, pdf, png } from "./support/sampleFiles.ts";
import { seedWorkflow } from "./support/seedWorkflow.ts";
import { current } from "./support/stackFixture.ts";

const run = promisify(execFile);
const sha256 = (bytes: Buffer) => `0x${createHash("sha256").update(bytes).digest("hex")}`;

interface AuditRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** The tool as a stranger runs it: an RPC endpoint, a deployment file, nothing else. */
async function audit(...args: string[]): Promise<AuditRun> {
  const stack = current();
  const argv = ["scripts/audit.ts", "--rpc", stack.rpcUrl, "--deployment", stack.config.deploymentFile!, ...args];
  try {
    const { stdout, stderr } = await run(process.execPath, argv, { cwd: REPO_ROOT, maxBuffer: 64 << 20, env: { PATH: process.env.PATH } });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: unknown; stdout: string; stderr: string };
    if (typeof failed.code !== "number") throw error;
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

async function auditJson(...args: string[]): Promise<{ code: number; report: Json }> {
  const result = await audit(...args, "--json");
  expect(result.stderr, "stderr").to.equal("");
  return { code: result.code, report: JSON.parse(result.stdout) };
}

describe("auditor's tool: npm run audit (chain logs and contract calls only, real stack)", function () {
  const runId = `${Date.now() % 1e7}`;
  // Department codes are letters and underscores only: spell the run id with letters.
  const tag = runId.replace(/\d/g, (d) => "ABCDEFGHIJ"[Number(d)]);
  const codes = { A: `AUDIT_PLAN_${tag}`, B: `AUDIT_LAND_${tag}`, C: `AUDIT_FIRE_${tag}` };
  let driver: Driver;
  let api: string;
  let admin: ReturnType<typeof httpClient>;
  let applicant: ReturnType<typeof httpClient>;
  const departments: Record<string, Awaited<ReturnType<typeof createDepartment>>> = {};
  const as = (name: keyof typeof codes) => departmentClient(api, departments[name]);

  interface Scenario {
    id: string;
    tokenId: number;
    docs: Record<string, string>; // docType -> documentId
    hashes: Record<string, string[]>; // docType -> SHA-256 of each version uploaded, in order
    decisionTxs: string[];
  }
  const scenarios: Record<"issued" | "invalidated" | "revoked", Scenario> = {} as never;

  /** A submitted BUILDING_PERMIT request with its three documents. */
  async function submittedRequest(label: string): Promise<Scenario> {
    const created = await applicant.post("/requests", { applicantId: `audit-${runId}`, requestType: "BUILDING_PERMIT" });
    expect(created.status).to.equal(201);
    const id = created.body.requestId as string;
    const scenario: Scenario = { id, tokenId: 0, docs: {}, hashes: {}, decisionTxs: [] };
    for (const [docType, bytes, name] of [["SITE_PLAN", pdf(`plan ${label} ${runId}`), "plan.pdf"], ["OWNERSHIP_DEED", png(`deed ${label} ${runId}`), "deed.png"], ["FIRE_SAFETY", jpeg(`fire ${label} ${runId}`), "fire.jpg"]] as const) {
      const uploaded = await applicant.upload("POST", `/requests/${id}/documents`, bytes, name, { docType });
      expect(uploaded.status, docType).to.equal(201);
      scenario.docs[docType] = uploaded.body.documentId;
      scenario.hashes[docType] = [sha256(bytes)];
    }
    expect((await applicant.post(`/requests/${id}/submit`)).status).to.equal(200);
    scenario.tokenId = (await applicant.get(`/requests/${id}`)).body.tokenId;
    return scenario;
  }

  async function decide(scenario: Scenario, name: keyof typeof codes, action: "approve" | "request-changes", body: Json) {
    const decided = await as(name).post(`/requests/${scenario.id}/${action}`, body);
    expect(decided.status, `${name} ${action}`).to.equal(200);
    scenario.decisionTxs.push(decided.body.transactionHash);
  }

  async function approveAll(scenario: Scenario) {
    await decide(scenario, "A", "approve", { remarks: "plan ok", reviewedDocuments: [scenario.docs.SITE_PLAN] });
    await decide(scenario, "B", "approve", { remarks: "deed ok", reviewedDocuments: [scenario.docs.OWNERSHIP_DEED] });
    await decide(scenario, "C", "approve", { remarks: "fire ok", reviewedDocuments: [scenario.docs.FIRE_SAFETY] });
  }

  /** Direct contract call through the test's own provider: an independent reading of the chain. */
  async function ownerOf(tokenId: number): Promise<string> {
    const data = await driver.core.provider.call({ to: current().deployment.contracts.LicenceToken, data: tokenAbi.encodeFunctionData("ownerOf", [tokenId]) });
    return tokenAbi.decodeFunctionResult("ownerOf", data)[0];
  }

  before(async function () {
    const stack = current();
    api = stack.api.url;
    driver = await createDriver(stack);
    const adminToken = await clientToken(api, stack.admin.clientId, stack.admin.clientSecret, "admin");
    admin = httpClient(api, adminToken);
    for (const [name, code] of Object.entries(codes)) departments[name] = await createDepartment(api, adminToken, { code, name: `${name} department` });
    await seedWorkflow(stack, driver, {
      workflowType: "BUILDING_PERMIT",
      name: "Building permit (audit test)",
      stages: [
        { stageId: "planning", stageName: "Planning", stageOrder: 1, executionType: "SEQUENTIAL", completionCriteria: "ALL",
          requiredApprovals: [{ departmentCode: codes.A, requiredDocuments: ["SITE_PLAN"], isMandatory: true }, { departmentCode: codes.B, requiredDocuments: ["OWNERSHIP_DEED"], isMandatory: true }] },
        { stageId: "safety", stageName: "Safety", stageOrder: 2, executionType: "PARALLEL", completionCriteria: "ALL",
          requiredApprovals: [{ departmentCode: codes.C, requiredDocuments: ["FIRE_SAFETY"], isMandatory: true }] },
      ],
    });
    applicant = httpClient(api, await applicantToken(api, { id: `audit-${runId}`, name: "Audrey Audit" }));

    // 1. Issued: three approvals, nothing else.
    scenarios.issued = await submittedRequest("issued");
    await approveAll(scenarios.issued);

    // 2. Invalidated: A approves the plan, B asks for changes, the plan gets a version 2 (A's approval falls on
    //    chain), the applicant resubmits and everyone approves.
    const inv = (scenarios.invalidated = await submittedRequest("invalidated"));
    await decide(inv, "A", "approve", { remarks: "plan v1 ok", reviewedDocuments: [inv.docs.SITE_PLAN] });
    await decide(inv, "B", "request-changes", { remarks: "deed not certified", requiredDocuments: ["OWNERSHIP_DEED"] });
    const planV2 = pdf(`plan v2 ${runId}`);
    const updated = await applicant.upload("PUT", `/requests/${inv.id}/documents/${inv.docs.SITE_PLAN}`, planV2, "plan2.pdf");
    expect(updated.status).to.equal(200);
    expect(updated.body.invalidatedApprovals).to.deep.equal([codes.A]);
    inv.hashes.SITE_PLAN.push(sha256(planV2));
    expect((await applicant.post(`/requests/${inv.id}/submit`)).body.status).to.equal("SUBMITTED");
    await approveAll(inv);

    // 3. Revoked: issued, then revoked by an administrator.
    scenarios.revoked = await submittedRequest("revoked");
    await approveAll(scenarios.revoked);
    expect((await admin.post(`/requests/${scenarios.revoked.id}/revoke`, { reasonCode: 4, reason: "fraud found" })).body.status).to.equal("REVOKED");
  });
  after(async () => driver?.close());

  it("prints an issued licence: status, validity, owner, every document hash and every decision with its department wallet", async function () {
    const { issued } = scenarios;
    const result = await audit("--token", String(issued.tokenId));
    expect(result.code, result.stderr).to.equal(0);
    const out = result.stdout;
    expect(out).to.include(`Licence token ${issued.tokenId}`);
    expect(out).to.match(/status +APPROVED, validity VALID/);
    expect(out).to.include(`owner      ${await ownerOf(issued.tokenId)}`);
    for (const hashes of Object.values(issued.hashes)) expect(out).to.include(`sha256 ${hashes[0]}`);
    for (const name of ["A", "B", "C"] as const) {
      expect(out).to.include(`${codes[name]}  APPROVED  STANDING  reviewed ${{ A: "SITE_PLAN", B: "OWNERSHIP_DEED", C: "FIRE_SAFETY" }[name]} v1`);
      expect(out).to.include(`sent by ${departments[name].walletAddress}  department wallet ${departments[name].walletAddress}  wallet ok`);
    }
    expect(out).to.include("standing approvals (3)");
    expect(out).to.include("findings: none");
    expect(out).to.match(/\nOK: 1 licence\(s\), 0 finding\(s\)\n?$/);
  });

  it("--json: the issued licence's facts equal the chain's (documents' SHA-256, wallets, expiry)", async function () {
    const { issued } = scenarios;
    const { code, report } = await auditJson("--token", String(issued.tokenId));
    expect(code).to.equal(0);
    expect(report.ok).to.equal(true);
    expect(report.chainId).to.equal(current().deployment.chainId);
    expect(report.contracts).to.deep.equal(current().deployment.contracts);
    expect(report.licences).to.have.length(1);
    const licence = report.licences[0];
    expect(licence).to.deep.include({ tokenId: issued.tokenId, status: "APPROVED", validity: "VALID", reasonCode: 0, owner: await ownerOf(issued.tokenId), findings: [] });
    expect(licence.review).to.deep.include({ phase: "CLOSED", stageCount: 2, documentPhase: "LOCKED" });
    expect(Date.parse(licence.expiresAt) - Date.parse(licence.issuedAt)).to.equal(730 * 86_400_000);
    expect(licence.issuance.transactionHash).to.equal(issued.decisionTxs.at(-1)); // the last approval issued it
    expect(licence.statusHistory.map((c: Json) => `${c.from}>${c.to}`)).to.deep.equal(["DRAFT>SUBMITTED", "SUBMITTED>APPROVED"]);

    expect(licence.documents.map((d: Json) => [d.docType, d.documentId, d.versions.map((v: Json) => [v.version, v.sha256, v.isLatest])])).to.deep.equal(
      ["SITE_PLAN", "OWNERSHIP_DEED", "FIRE_SAFETY"].map((type) => [type, issued.docs[type], [[1, issued.hashes[type][0], true]]]),
    );

    expect(licence.decisions).to.have.length(3);
    expect(licence.decisions.map((d: Json) => [d.stage, d.departmentCode, d.decision, d.fate, d.sender, d.departmentWallet, d.walletMatches, d.transactionHash])).to.deep.equal([
      [0, codes.A, "APPROVED", "STANDING", departments.A.walletAddress, departments.A.walletAddress, true, issued.decisionTxs[0]],
      [0, codes.B, "APPROVED", "STANDING", departments.B.walletAddress, departments.B.walletAddress, true, issued.decisionTxs[1]],
      [1, codes.C, "APPROVED", "STANDING", departments.C.walletAddress, departments.C.walletAddress, true, issued.decisionTxs[2]],
    ]);
    // The exact versions reviewed are on chain: A reviewed document #0 (the plan) at version 1.
    expect(licence.decisions[0].reviewed).to.deep.equal([{ docIndex: 0, version: 1 }]);
    expect(licence.approvals.map((a: Json) => [a.stage, a.departmentCode, a.transactionHash])).to.deep.equal([
      [0, codes.A, issued.decisionTxs[0]], [0, codes.B, issued.decisionTxs[1]], [1, codes.C, issued.decisionTxs[2]],
    ]);
  });

  it("--json after an invalidation: both versions of the plan, the invalidated approval and the re-approval", async function () {
    const inv = scenarios.invalidated;
    const { code, report } = await auditJson("--token", String(inv.tokenId));
    expect(code).to.equal(0);
    const licence = report.licences[0];
    expect(licence).to.deep.include({ status: "APPROVED", validity: "VALID", findings: [] });

    const plan = licence.documents.find((d: Json) => d.docType === "SITE_PLAN");
    expect(plan.documentId).to.equal(inv.docs.SITE_PLAN);
    expect(plan.latestVersion).to.equal(2);
    expect(plan.versions.map((v: Json) => [v.version, v.sha256, v.isLatest])).to.deep.equal([[1, inv.hashes.SITE_PLAN[0], false], [2, inv.hashes.SITE_PLAN[1], true]]);

    expect(licence.decisions.map((d: Json) => [d.stage, d.departmentCode, d.decision, d.fate, d.walletMatches, d.transactionHash])).to.deep.equal([
      [0, codes.A, "APPROVED", "INVALIDATED", true, inv.decisionTxs[0]],
      [0, codes.B, "CHANGES_REQUESTED", "SUPERSEDED", true, inv.decisionTxs[1]],
      [0, codes.A, "APPROVED", "STANDING", true, inv.decisionTxs[2]],
      [0, codes.B, "APPROVED", "STANDING", true, inv.decisionTxs[3]],
      [1, codes.C, "APPROVED", "STANDING", true, inv.decisionTxs[4]],
    ]);
    expect(licence.decisions[0].invalidatedBy).to.deep.include({ docIndex: 0, newVersion: 2 });
    expect(licence.decisions[0].reviewed).to.deep.equal([{ docIndex: 0, version: 1 }]);
    expect(licence.decisions[2].reviewed).to.deep.equal([{ docIndex: 0, version: 2 }]);
    for (const d of licence.decisions) expect(d.sender).to.equal(departments[d.departmentCode === codes.A ? "A" : d.departmentCode === codes.B ? "B" : "C"].walletAddress);
    // A's standing approval is the re-approval, not the invalidated one.
    expect(licence.approvals.map((a: Json) => [a.departmentCode, a.transactionHash])).to.deep.equal([[codes.A, inv.decisionTxs[2]], [codes.B, inv.decisionTxs[3]], [codes.C, inv.decisionTxs[4]]]);
  });

  it("--json on a revoked licence: REVOKED with its reason, issuance kept, approvals still on chain", async function () {
    const { revoked } = scenarios;
    const { code, report } = await auditJson("--token", String(revoked.tokenId));
    expect(code).to.equal(0);
    const licence = report.licences[0];
    expect(licence).to.deep.include({ status: "REVOKED", validity: "REVOKED", reasonCode: 4, findings: [] });
    expect(licence.issuedAt).to.be.a("string");
    expect(licence.statusHistory.at(-1)).to.deep.include({ from: "APPROVED", to: "REVOKED", reasonCode: 4 });
    expect(licence.decisions).to.have.length(3);
    expect(licence.approvals).to.have.length(3);
  });

  it("--all: every licence minted, each consistent", async function () {
    const { code, report } = await auditJson("--all");
    expect(code).to.equal(0);
    const byToken = new Map<number, Json>(report.licences.map((l: Json) => [l.tokenId, l]));
    expect(byToken.get(scenarios.issued.tokenId)?.status).to.equal("APPROVED");
    expect(byToken.get(scenarios.invalidated.tokenId)?.decisions).to.have.length(5);
    expect(byToken.get(scenarios.revoked.tokenId)?.status).to.equal("REVOKED");
    for (const licence of report.licences) expect(licence.findings, `token ${licence.tokenId}`).to.deep.equal([]);
    // The same facts as a single-token audit (logs filtered by tokenId topic, read 7 blocks at a time, vs. all logs at once).
    const single = (await auditJson("--token", String(scenarios.invalidated.tokenId), "--chunk", "7")).report.licences[0];
    expect(byToken.get(scenarios.invalidated.tokenId)).to.deep.equal(single);
  });

  it("refuses what it cannot audit: an unknown token, a deployment file for another chain, bad arguments (exit 2)", async function () {
    const unknown = await audit("--token", "999999");
    expect(unknown.code).to.equal(2);
    expect(unknown.stderr).to.include("token 999999 does not exist on chain");
    expect(unknown.stdout).to.equal("");

    const otherChain = path.join(os.tmpdir(), `audit-deployment-${runId}.json`);
    await writeFile(otherChain, JSON.stringify({ ...current().deployment, chainId: 1 }));
    const stack = current();
    const wrong = await run(process.execPath, ["scripts/audit.ts", "--rpc", stack.rpcUrl, "--deployment", otherChain, "--all"], { cwd: REPO_ROOT }).catch((e) => e);
    await rm(otherChain, { force: true });
    expect(wrong.code).to.equal(2);
    expect(wrong.stderr).to.include(`serves chain ${stack.deployment.chainId} but the deployment file is for chain 1`);

    const both = await audit("--all", "--token", "1");
    expect(both.code).to.equal(2);
    expect(both.stderr).to.include("give exactly one of --token N and --all");
  });

  it("--compare: the API's public answers agree with the chain for every licence and document version (exit 0)", async function () {
    const tokens = Object.values(scenarios).map((s) => s.tokenId);
    for (const tokenId of tokens) {
      // The API names transactions from its index: give it the moment it needs to catch up.
      const result = await eventually(`the API to agree on token ${tokenId}`, async () => {
        const attempt = await audit("--token", String(tokenId), "--compare", api);
        return attempt.code === 0 ? attempt : undefined;
      }, 20_000).catch(async (error) => {
        throw new Error(`${error.message}\n${(await audit("--token", String(tokenId), "--compare", api)).stdout}`);
      });
      expect(result.stdout).to.include(`Compared with ${api}: the API agrees with the chain on every field.`);
    }
    const { code, report } = await auditJson("--token", String(scenarios.invalidated.tokenId), "--compare", `${api}/api/v1/`);
    expect(code).to.equal(0);
    expect(report.comparison).to.deep.equal({ baseUrl: `${api}/api/v1/`, differences: [] });
  });

  describe("--compare against an API that disagrees", function () {
    let fake: http.Server;
    let fakeUrl: string;
    let supersededPlan: string;

    before(async function () {
      supersededPlan = scenarios.invalidated.hashes.SITE_PLAN[0].slice(2);
      // Forwards every call to the real API and alters three answers.
      fake = http.createServer(async (req, res) => {
        const answer = await fetch(`${api}${req.url}`);
        const body = (await answer.json()) as Json;
        if (req.url === `/api/v1/verify/${scenarios.issued.tokenId}`) {
          body.status = "SUSPENDED";
          body.blockchainProof.ownerAddress = Wallet.createRandom().address;
          body.approvals = body.approvals.filter((a: Json) => a.departmentCode !== codes.C);
        }
        if (req.url === `/api/v1/verify/document/${supersededPlan}`) body.isLatest = true;
        if (req.url === `/api/v1/verify/${scenarios.revoked.tokenId}`) {
          res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ code: "NOT_FOUND" }));
          return;
        }
        res.writeHead(answer.status, { "content-type": "application/json" }).end(JSON.stringify(body));
      });
      await new Promise<void>((resolve) => fake.listen(0, "127.0.0.1", resolve));
      fakeUrl = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`;
    });
    after(async () => new Promise<void>((resolve) => fake?.close(() => resolve())));

    it("exits 1 and names each differing field with the chain's and the API's values", async function () {
      const issued = await audit("--token", String(scenarios.issued.tokenId), "--compare", fakeUrl);
      expect(issued.code).to.equal(1);
      expect(issued.stdout).to.include(`Compared with ${fakeUrl}: 3 differences`);
      expect(issued.stdout).to.include(`token ${scenarios.issued.tokenId}  status: chain APPROVED, API SUSPENDED`);
      expect(issued.stdout).to.match(new RegExp(`token ${scenarios.issued.tokenId}  blockchainProof\\.ownerAddress: chain ${await ownerOf(scenarios.issued.tokenId)}, API 0x[0-9a-fA-F]{40}`));
      expect(issued.stdout).to.include(`approvals[stage 1, ${codes.C}]: chain approved at`);
      expect(issued.stdout).to.include("API absent");
      expect(issued.stdout).to.match(/NOT OK: .*3 difference\(s\) with the API/);

      const inv = await auditJson("--token", String(scenarios.invalidated.tokenId), "--compare", fakeUrl);
      expect(inv.code).to.equal(1);
      expect(inv.report.ok).to.equal(false);
      expect(inv.report.comparison.differences).to.deep.equal([
        { subject: `document 0x${supersededPlan} (token ${scenarios.invalidated.tokenId}, SITE_PLAN v1)`, field: "isLatest", chain: false, api: true },
      ]);

      const revoked = await audit("--token", String(scenarios.revoked.tokenId), "--compare", fakeUrl);
      expect(revoked.code).to.equal(1);
      expect(revoked.stdout).to.include(`token ${scenarios.revoked.tokenId}  (HTTP status): chain exists: 200 expected, API 404`);
    });

    it("exits 2 when the API cannot be reached", async function () {
      const closed = await audit("--token", String(scenarios.issued.tokenId), "--compare", "http://127.0.0.1:9");
      expect(closed.code).to.equal(2);
      expect(closed.stderr).to.include("cannot reach the API at http://127.0.0.1:9");
    });
  });

  // Last (mocha runs nested suites in order, after the plain tests): it rotates department C's wallet on chain,
  // after which the API can no longer decide as C.
  describe("after a department's wallet is rotated", function () {
    it("checks each decision against the wallet registered at its block, not today's: the rotation changes nothing", async function () {
      const { issued } = scenarios;
      const newWallet = Wallet.createRandom().address;
      await driver.send("UPDATE_DEPARTMENT", driver.operator, "ApprovalRegistry", registry.encodeFunctionData("rotateDepartmentWallet", [b32(codes.C), newWallet]));
      const { code, report } = await auditJson("--token", String(issued.tokenId));
      expect(code).to.equal(0);
      const decision = report.licences[0].decisions.find((d: Json) => d.departmentCode === codes.C);
      expect(decision).to.deep.include({ sender: departments.C.walletAddress, departmentWallet: departments.C.walletAddress, walletMatches: true });
      expect(report.licences[0].findings).to.deep.equal([]);
    });
  });
});

/**
 * No real transaction can make a decision's sender differ from the department's wallet (the contract decides by
 * msg.sender), so the flagging itself is checked on synthetic events: which wallet was registered at each point,
 * including a rotation and a decision in the same block, ordered by log index.
 */
describe("auditor's tool: decisions against the department's wallet at their block (synthetic events)", function () {
  const [w1, w2, intruder] = [Wallet.createRandom().address, Wallet.createRandom().address, Wallet.createRandom().address];
  const event = (name: string, blockNumber: number, logIndex: number, args: Record<string, unknown>, transactionHash = `0x${"0".repeat(62)}${blockNumber.toString(16).padStart(2, "0")}`): ChainEvent =>
    ({ name, args: args as unknown as Result, address: "", transactionHash, blockNumber, logIndex });
  const decision = (blockNumber: number, logIndex: number, tx: string) =>
    event("DecisionRecorded", blockNumber, logIndex, { tokenId: 7n, departmentId: 1n, stage: 0n, decision: 1n, reasonCode: 0n, reviewedMask: 0n, documentVersions: 0n, remarksHash: "0x" }, tx);

  it("passes the wallet of the time, flags any other sender, and orders a rotation within its block", async function () {
    const wallets = new DepartmentWallets([
      event("DepartmentRegistered", 10, 0, { departmentId: 1n, code: encodeBytes32String("FIRE"), wallet: w1 }),
      event("DepartmentWalletRotated", 20, 3, { departmentId: 1n, previousWallet: w1, wallet: w2 }),
    ]);
    const senders: Record<string, string> = { "0xa": w1, "0xb": w1, "0xc": w2, "0xd": intruder };
    const events = [decision(15, 0, "0xa"), decision(20, 1, "0xb"), decision(20, 4, "0xc"), decision(30, 0, "0xd")];
    const findings: string[] = [];
    const { decisions } = await auditDecisions(events, [[{ departmentId: 1, status: 1 }]], wallets, { senderOf: async (tx) => senders[tx], timeOf: async () => "2026-01-01T00:00:00.000Z" }, findings);
    expect(decisions.map((d) => [d.departmentCode, d.departmentWallet, d.walletMatches])).to.deep.equal([
      ["FIRE", w1, true], // before the rotation
      ["FIRE", w1, true], // same block, earlier log: still the old wallet
      ["FIRE", w2, true], // same block, after the rotation
      ["FIRE", w2, false], // sent by a wallet that was never the department's
    ]);
    expect(findings).to.have.length(1);
    expect(findings[0]).to.include(`was sent by ${intruder}, but the department's wallet at block 30 was ${w2}`);
  });
});
