/**
 * The auditor's tool (`node scripts/audit.ts`) as a child process against the real stack: it is given only the
 * RPC endpoint and the deployment file, and what it prints is checked against facts the test knows independently
 * (the SHA-256 of the files it uploaded, the wallets the departments were created with, direct contract calls).
 * Reference scenarios: an issued licence; one whose approval a new document version invalidated before it was
 * re-approved; a revoked one. Then --all, --json, wrong inputs, --compare against the API (agreeing) and against
 * a fake API that alters some answers (disagreeing, non-zero exit naming the fields); last, wallet changes on
 * chain: one that waits out its delay in public (clean), and one forced inside its window followed by a decision
 * from the new wallet (flagged). The replay functions themselves are tested on synthetic histories in test/audit.
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
import {
  AbiCoder,
  Interface,
  JsonRpcProvider,
  Wallet,
  encodeBytes32String,
  id,
  keccak256,
  toBeHex,
  zeroPadValue,
} from "ethers";
import { ApprovalRegistryAbi, DocumentRegistryAbi, LicenceTokenAbi } from "../../abis/index.ts";
import { readDeployment, type Deployment } from "../../scripts/audit/deploymentFile.ts";
import { REPO_ROOT } from "../../scripts/stack/stack.ts";
import { applicantToken, clientToken } from "./support/authClient.ts";
import { createDepartment, departmentClient, eoaKeySigner, keyProof } from "./support/departmentClient.ts";
import { eventually } from "./support/eventually.ts";
import { apiClient as httpClient, type Json } from "./support/httpClient.ts";
import { jpeg, pdf, png } from "./support/sampleFiles.ts";
import { registerWorkflowVersion } from "./support/workflowAdmin.ts";
import { current } from "./support/stackFixture.ts";
import { letters } from "./support/sessions.ts";
import { stage, workflow } from "./support/workflowDefinition.ts";

const run = promisify(execFile);
const b32 = encodeBytes32String;
const tokenAbi = new Interface(LicenceTokenAbi as never);
const registryAbi = new Interface(ApprovalRegistryAbi as never);
const documentsAbi = new Interface(DocumentRegistryAbi as never);
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
    const { stdout, stderr } = await run(process.execPath, argv, {
      cwd: REPO_ROOT,
      maxBuffer: 64 << 20,
      env: { PATH: process.env.PATH },
    });
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
  const tag = letters(runId);
  const codes = { A: `AUDIT_PLAN_${tag}`, B: `AUDIT_LAND_${tag}`, C: `AUDIT_FIRE_${tag}` };
  let adminToken: string;
  const definition = workflow(
    "BUILDING_PERMIT",
    "Building permit (audit test)",
    stage("planning", "Planning", "SEQUENTIAL", { [codes.A]: ["SITE_PLAN"], [codes.B]: ["OWNERSHIP_DEED"] }),
    stage("safety", "Safety", "PARALLEL", { [codes.C]: ["FIRE_SAFETY"] }),
  );
  let chain: JsonRpcProvider;
  let deployment: Deployment;
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

  /** A view call through the test's own provider: an independent reading of the chain. */
  async function call(iface: Interface, to: string, name: string, args: unknown[]) {
    return iface.decodeFunctionResult(name, await chain.call({ to, data: iface.encodeFunctionData(name, args) }));
  }

  /** A submitted BUILDING_PERMIT request with its three documents. */
  async function submittedRequest(label: string): Promise<Scenario> {
    const created = await applicant.post("/requests", {
      applicantId: `audit-${runId}`,
      requestType: "BUILDING_PERMIT",
    });
    expect(created.status).to.equal(201);
    const id = created.body.requestId as string;
    const scenario: Scenario = { id, tokenId: 0, docs: {}, hashes: {}, decisionTxs: [] };
    for (const [docType, bytes, name] of [
      ["SITE_PLAN", pdf(`plan ${label} ${runId}`), "plan.pdf"],
      ["OWNERSHIP_DEED", png(`deed ${label} ${runId}`), "deed.png"],
      ["FIRE_SAFETY", jpeg(`fire ${label} ${runId}`), "fire.jpg"],
    ] as const) {
      const uploaded = await applicant.upload("POST", `/requests/${id}/documents`, bytes, name, { docType });
      expect(uploaded.status, docType).to.equal(201);
      scenario.docs[docType] = uploaded.body.documentId;
      scenario.hashes[docType] = [sha256(bytes)];
    }
    expect((await applicant.post(`/requests/${id}/submit`)).status).to.equal(200);
    scenario.tokenId = (await applicant.get(`/requests/${id}`)).body.tokenId;
    return scenario;
  }

  async function decide(
    scenario: Scenario,
    name: keyof typeof codes,
    action: "approve" | "request-changes",
    body: Json,
  ) {
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
    return (await call(tokenAbi, deployment.contracts.LicenceToken, "ownerOf", [tokenId]))[0];
  }

  /** The applicant commitment the mint recorded, read from LicenceMinted by the test itself. */
  async function commitmentOf(tokenId: number): Promise<string> {
    const minted = tokenAbi.getEvent("LicenceMinted")!;
    const [log] = await chain.getLogs({
      address: deployment.contracts.LicenceToken,
      fromBlock: deployment.startBlock,
      topics: [minted.topicHash, zeroPadValue(toBeHex(tokenId), 32)],
    });
    return String(tokenAbi.parseLog(log)!.args.applicantCommitment).toLowerCase();
  }

  before(async function () {
    const stack = current();
    api = stack.api.url;
    chain = new JsonRpcProvider(stack.rpcUrl, undefined, { staticNetwork: true, cacheTimeout: -1 });
    deployment = await readDeployment(stack.config.deploymentFile!);
    adminToken = await clientToken(api, stack.admin.clientId, stack.admin.clientSecret, "admin");
    admin = httpClient(api, adminToken);
    for (const [name, code] of Object.entries(codes))
      departments[name] = await createDepartment(api, adminToken, { code, name: `${name} department` });
    await registerWorkflowVersion(api, adminToken, definition);
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
    const updated = await applicant.upload(
      "PUT",
      `/requests/${inv.id}/documents/${inv.docs.SITE_PLAN}`,
      planV2,
      "plan2.pdf",
    );
    expect(updated.status).to.equal(200);
    expect(updated.body.invalidatedApprovals).to.deep.equal([codes.A]);
    inv.hashes.SITE_PLAN.push(sha256(planV2));
    expect((await applicant.post(`/requests/${inv.id}/submit`)).body.status).to.equal("SUBMITTED");
    await approveAll(inv);

    // 3. Revoked: issued, then revoked by an administrator.
    scenarios.revoked = await submittedRequest("revoked");
    await approveAll(scenarios.revoked);
    expect(
      (await admin.post(`/requests/${scenarios.revoked.id}/revoke`, { reasonCode: 4, reason: "fraud found" })).body
        .status,
    ).to.equal("REVOKED");
  });
  after(async () => chain?.destroy());

  it("prints an issued licence: status, validity, owner, every document hash and every decision with its department wallet", async function () {
    const { issued } = scenarios;
    const result = await audit("--token", String(issued.tokenId));
    expect(result.code, result.stderr).to.equal(0);
    const out = result.stdout;
    expect(out).to.include(`Licence token ${issued.tokenId}`);
    expect(out).to.match(/status +APPROVED, validity VALID/);
    expect(out).to.include(`owner      ${await ownerOf(issued.tokenId)}`);
    expect(out).to.include(`applicant commitment ${await commitmentOf(issued.tokenId)}`);
    for (const hashes of Object.values(issued.hashes)) expect(out).to.include(`sha256 ${hashes[0]}`);
    for (const name of ["A", "B", "C"] as const) {
      expect(out).to.include(
        `${codes[name]}  APPROVED  STANDING  reviewed ${{ A: "SITE_PLAN", B: "OWNERSHIP_DEED", C: "FIRE_SAFETY" }[name]} v1`,
      );
      const wallet = departments[name].walletAddress;
      expect(out).to.include(
        `signer ${wallet} CUSTODIAL sent by ${wallet}  department wallet ${wallet} CUSTODIAL  wallet ok`,
      );
    }
    expect(out).to.include("standing approvals (3)");
    expect(out).to.include("at issuance: 2 of 2 stages complete (1, 2), issued by ApprovalRegistry");
    expect(out).to.include("platform findings: none");
    expect(out).to.include("findings: none");
    expect(out).to.match(/\nOK: 1 licence\(s\), 0 finding\(s\)\n?$/);
  });

  it("--json: the issued licence's facts equal the chain's (documents' SHA-256, wallets, expiry)", async function () {
    const { issued } = scenarios;
    const { code, report } = await auditJson("--token", String(issued.tokenId));
    expect(code).to.equal(0);
    expect(report.ok).to.equal(true);
    expect(report.chainId).to.equal(current().deployment.chainId);
    expect(report.contracts).to.deep.equal(deployment.contracts);
    expect(report.findings).to.deep.equal([]);
    // Three different keys, each holding its roles, and nothing else holding any.
    const { governance, admin: adminKey, operator } = deployment.roles;
    expect(new Set([governance, adminKey, operator]).size).to.equal(3);
    const holders = (role: string) => [
      ...new Set(report.roles.holders.filter((h: Json) => h.role === role).map((h: Json) => h.account)),
    ];
    expect(holders("DEFAULT_ADMIN_ROLE")).to.deep.equal([governance]);
    expect(holders("ADMIN_ROLE")).to.deep.equal([adminKey]);
    expect(holders("OPERATOR_ROLE")).to.deep.equal([operator]);
    expect(report.wiring).to.deep.include({
      tokenApprovalRegistry: deployment.contracts.ApprovalRegistry,
      documentReviewRegistry: deployment.contracts.ApprovalRegistry,
      decisionVerifier: deployment.contracts.DecisionVerifier,
      decisionVerifierHasCode: true,
    });
    expect(report.licences).to.have.length(1);
    const licence = report.licences[0];
    expect(licence).to.deep.include({
      tokenId: issued.tokenId,
      status: "APPROVED",
      validity: "VALID",
      reasonCode: 0,
      owner: await ownerOf(issued.tokenId),
      applicantCommitment: await commitmentOf(issued.tokenId),
      findings: [],
    });
    expect(licence.review).to.deep.include({ phase: "CLOSED", stageCount: 2, documentPhase: "LOCKED" });
    expect(Date.parse(licence.expiresAt) - Date.parse(licence.issuedAt)).to.equal(730 * 86_400_000);
    expect(licence.issuance.transactionHash).to.equal(issued.decisionTxs.at(-1)); // the last approval issued it
    expect(licence.statusHistory.map((c: Json) => `${c.from}>${c.to}`)).to.deep.equal([
      "DRAFT>SUBMITTED",
      "SUBMITTED>APPROVED",
    ]);

    expect(
      licence.documents.map((d: Json) => [
        d.docType,
        d.documentId,
        d.versions.map((v: Json) => [v.version, v.sha256, v.isLatest]),
      ]),
    ).to.deep.equal(
      ["SITE_PLAN", "OWNERSHIP_DEED", "FIRE_SAFETY"].map((type) => [
        type,
        issued.docs[type],
        [[1, issued.hashes[type][0], true]],
      ]),
    );

    expect(licence.decisions).to.have.length(3);
    expect(
      licence.decisions.map((d: Json) => [
        d.stage,
        d.departmentCode,
        d.decision,
        d.fate,
        d.sender,
        d.signer,
        d.custody,
        d.route,
        d.departmentWallet,
        d.walletMatches,
        d.transactionHash,
      ]),
    ).to.deep.equal(
      (["A", "B", "C"] as const).map((name, i) => {
        const wallet = departments[name].walletAddress;
        return [
          i < 2 ? 1 : 2,
          codes[name],
          "APPROVED",
          "STANDING",
          wallet,
          wallet,
          "CUSTODIAL",
          "SENT",
          wallet,
          true,
          issued.decisionTxs[i],
        ];
      }),
    );
    // Issued with both stages complete, by the approval registry, on the versions current at issuance.
    expect(licence.issuanceCheck).to.deep.include({
      stagesCompleted: [1, 2],
      issuedBy: deployment.contracts.ApprovalRegistry,
    });
    expect(
      licence.issuanceCheck.approvals.map((a: Json) => [
        a.departmentCode,
        a.covered.map((c: Json) => [c.docType, c.version, c.latestAtIssuance]),
      ]),
    ).to.deep.equal([
      [codes.A, [["SITE_PLAN", 1, 1]]],
      [codes.B, [["OWNERSHIP_DEED", 1, 1]]],
      [codes.C, [["FIRE_SAFETY", 1, 1]]],
    ]);
    // The exact versions reviewed are on chain: A reviewed document #0 (the plan) at version 1.
    expect(licence.decisions[0].reviewed).to.deep.equal([{ docIndex: 0, version: 1 }]);
    expect(licence.approvals.map((a: Json) => [a.stage, a.departmentCode, a.transactionHash])).to.deep.equal([
      [1, codes.A, issued.decisionTxs[0]],
      [1, codes.B, issued.decisionTxs[1]],
      [2, codes.C, issued.decisionTxs[2]],
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
    expect(plan.versions.map((v: Json) => [v.version, v.sha256, v.isLatest])).to.deep.equal([
      [1, inv.hashes.SITE_PLAN[0], false],
      [2, inv.hashes.SITE_PLAN[1], true],
    ]);

    expect(
      licence.decisions.map((d: Json) => [
        d.stage,
        d.departmentCode,
        d.decision,
        d.fate,
        d.walletMatches,
        d.transactionHash,
      ]),
    ).to.deep.equal([
      [1, codes.A, "APPROVED", "INVALIDATED", true, inv.decisionTxs[0]],
      [1, codes.B, "CHANGES_REQUESTED", "SUPERSEDED", true, inv.decisionTxs[1]],
      [1, codes.A, "APPROVED", "STANDING", true, inv.decisionTxs[2]],
      [1, codes.B, "APPROVED", "STANDING", true, inv.decisionTxs[3]],
      [2, codes.C, "APPROVED", "STANDING", true, inv.decisionTxs[4]],
    ]);
    expect(licence.decisions[0].invalidatedBy).to.deep.include({ docIndex: 0, newVersion: 2 });
    expect(licence.decisions[0].reviewed).to.deep.equal([{ docIndex: 0, version: 1 }]);
    expect(licence.decisions[2].reviewed).to.deep.equal([{ docIndex: 0, version: 2 }]);
    // The approval standing at issuance covered the plan's version 2, the latest then.
    expect(licence.issuanceCheck.approvals[0]).to.deep.include({
      departmentCode: codes.A,
      transactionHash: inv.decisionTxs[2],
    });
    expect(licence.issuanceCheck.approvals[0].covered).to.deep.equal([
      { docIndex: 0, docType: "SITE_PLAN", version: 2, latestAtIssuance: 2 },
    ]);
    for (const d of licence.decisions)
      expect(d.sender).to.equal(
        departments[d.departmentCode === codes.A ? "A" : d.departmentCode === codes.B ? "B" : "C"].walletAddress,
      );
    // A's standing approval is the re-approval, not the invalidated one.
    expect(licence.approvals.map((a: Json) => [a.departmentCode, a.transactionHash])).to.deep.equal([
      [codes.A, inv.decisionTxs[2]],
      [codes.B, inv.decisionTxs[3]],
      [codes.C, inv.decisionTxs[4]],
    ]);
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
    expect(report.findings).to.deep.equal([]);
    for (const licence of report.licences) expect(licence.findings, `token ${licence.tokenId}`).to.deep.equal([]);
    // The same facts as a single-token audit (logs filtered by tokenId topic, read 7 blocks at a time, vs. all logs at once).
    const single = (await auditJson("--token", String(scenarios.invalidated.tokenId), "--chunk", "7")).report
      .licences[0];
    expect(byToken.get(scenarios.invalidated.tokenId)).to.deep.equal(single);
  });

  it("refuses what it cannot audit: an unknown token, a deployment file for another chain, bad arguments (exit 2)", async function () {
    const unknown = await audit("--token", "999999");
    expect(unknown.code).to.equal(2);
    expect(unknown.stderr).to.include("token 999999 does not exist on chain");
    expect(unknown.stdout).to.equal("");

    const otherChain = path.join(os.tmpdir(), `audit-deployment-${runId}.json`);
    await writeFile(otherChain, JSON.stringify({ ...deployment, chainId: 1 }));
    const stack = current();
    const wrong = await run(
      process.execPath,
      ["scripts/audit.ts", "--rpc", stack.rpcUrl, "--deployment", otherChain, "--all"],
      { cwd: REPO_ROOT },
    ).catch((e) => e);
    await rm(otherChain, { force: true });
    expect(wrong.code).to.equal(2);
    expect(wrong.stderr).to.include(`serves chain ${deployment.chainId} but the deployment file is for chain 1`);

    const both = await audit("--all", "--token", "1");
    expect(both.code).to.equal(2);
    expect(both.stderr).to.include("give exactly one of --token N and --all");
  });

  it("--compare: the API's public answers agree with the chain for every licence and document version (exit 0)", async function () {
    const tokens = Object.values(scenarios).map((s) => s.tokenId);
    for (const tokenId of tokens) {
      // The API names transactions from its index: give it the moment it needs to catch up.
      const result = await eventually(
        `the API to agree on token ${tokenId}`,
        async () => {
          const attempt = await audit("--token", String(tokenId), "--compare", api);
          return attempt.code === 0 ? attempt : undefined;
        },
        20_000,
      ).catch(async (error) => {
        throw new Error(`${error.message}\n${(await audit("--token", String(tokenId), "--compare", api)).stdout}`);
      });
      expect(result.stdout).to.include(`Compared with ${api}: the API agrees with the chain on every field.`);
    }
    const { code, report } = await auditJson(
      "--token",
      String(scenarios.invalidated.tokenId),
      "--compare",
      `${api}/api/v1/`,
    );
    expect(code).to.equal(0);
    expect(report.comparison).to.deep.equal({ baseUrl: `${api}/api/v1/`, differences: [] });
  });

  it("after `npm run demo`: its licence audits clean and --compare reports 0 differences", async function () {
    const stack = current();
    const { stdout } = await run(process.execPath, [path.join(REPO_ROOT, "scripts", "demo.ts")], {
      // BUILDING_PERMIT, as demo.test.ts: other stack tests expect RESORT_LICENSE's versions and no TRADE_LICENSE
      // workflow. The demo's workflow replaces this file's; the wallet-change tests register it again.
      env: { ...process.env, ...stack.env, API_URL: api, DEMO_TYPE: "BUILDING_PERMIT" },
      maxBuffer: 4 * 1024 * 1024,
    });
    const tokenId = /verify\?token=(\d+)/.exec(stdout)?.[1];
    expect(tokenId, stdout).to.be.a("string");
    const result = await eventually(
      `the API to agree on the demo's token ${tokenId}`,
      async () => {
        const attempt = await audit("--token", tokenId!, "--compare", api);
        return attempt.code === 0 ? attempt : undefined;
      },
      20_000,
    ).catch(async (error) => {
      throw new Error(`${error.message}\n${(await audit("--token", tokenId!, "--compare", api)).stdout}`);
    });
    expect(result.stdout).to.include("findings: none").and.include("platform findings: none");
    expect(result.stdout).to.include(`Compared with ${api}: the API agrees with the chain on every field.`);
    expect(result.stdout).to.match(/status +APPROVED, validity VALID/);
    // The demo's fire department holds its own key: its approval was relayed, and its signature checks out.
    const { report } = await auditJson("--token", tokenId!);
    const licence = report.licences[0];
    expect(licence.applicantCommitment).to.equal(await commitmentOf(Number(tokenId)));
    const relayed = licence.decisions.filter((d: Json) => d.route === "RELAYED");
    expect(relayed).to.have.length(1);
    expect(relayed[0]).to.deep.include({
      decision: "APPROVED",
      custody: "DEPARTMENT_HELD",
      departmentCustody: "DEPARTMENT_HELD",
      sender: deployment.roles.operator,
      walletMatches: true,
    });
    expect(
      licence.decisions
        .filter((d: Json) => d.route === "SENT")
        .every((d: Json) => d.custody === "CUSTODIAL" && d.sender === d.signer),
    ).to.equal(true);
  });

  it("--all --compare: every licence on the chain (this file's, the demo's, earlier stack tests') agrees with the API, no finding", async function () {
    // A request under review and a draft too: the API answers those with their verdict and status only. (This
    // file's workflow again: the demo replaced it.)
    await registerWorkflowVersion(api, adminToken, definition);
    const underReview = await submittedRequest("reviewing");
    const draft = await applicant.post("/requests", { applicantId: `audit-${runId}`, requestType: "BUILDING_PERMIT" });
    expect(draft.status).to.equal(201);
    const result = await eventually(
      "the API to agree on every licence",
      async () => {
        const attempt = await auditJson("--all", "--compare", api);
        return attempt.code === 0 ? attempt : undefined;
      },
      30_000,
    ).catch(async (error) => {
      const last = await auditJson("--all", "--compare", api);
      throw new Error(
        `${error.message}\n${JSON.stringify({ findings: last.report.findings, licences: last.report.licences.filter((l: Json) => l.findings.length).map((l: Json) => [l.tokenId, l.findings]), differences: last.report.comparison?.differences }, null, 1)}`,
      );
    });
    expect(result.report.comparison.differences).to.deep.equal([]);
    expect(result.report.licences.length).to.be.at.least(6);
    const reviewed = result.report.licences.find((l: Json) => l.tokenId === underReview.tokenId);
    expect(reviewed).to.deep.include({ status: "SUBMITTED", validity: "NOT_ISSUED", findings: [] });
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
        if (req.url === `/api/v1/verify/document/${supersededPlan}?tokenId=${scenarios.invalidated.tokenId}`)
          body.isLatest = true;
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
      expect(issued.stdout).to.match(
        new RegExp(
          `token ${scenarios.issued.tokenId}  blockchainProof\\.ownerAddress: chain ${await ownerOf(scenarios.issued.tokenId)}, API 0x[0-9a-fA-F]{40}`,
        ),
      );
      expect(issued.stdout).to.include(`approvals[stage 2, ${codes.C}]: chain approved at`);
      expect(issued.stdout).to.include("API absent");
      expect(issued.stdout).to.match(/NOT OK: .*3 difference\(s\) with the API/);

      const inv = await auditJson("--token", String(scenarios.invalidated.tokenId), "--compare", fakeUrl);
      expect(inv.code).to.equal(1);
      expect(inv.report.ok).to.equal(false);
      expect(inv.report.comparison.differences).to.deep.equal([
        {
          subject: `document 0x${supersededPlan} (token ${scenarios.invalidated.tokenId}, SITE_PLAN v1)`,
          field: "isLatest",
          chain: false,
          api: true,
        },
      ]);

      const revoked = await audit("--token", String(scenarios.revoked.tokenId), "--compare", fakeUrl);
      expect(revoked.code).to.equal(1);
      expect(revoked.stdout).to.include(
        `token ${scenarios.revoked.tokenId}  (HTTP status): chain exists: 200 expected, API 404`,
      );
    });

    it("exits 2 when the API cannot be reached", async function () {
      const closed = await audit("--token", String(scenarios.issued.tokenId), "--compare", "http://127.0.0.1:9");
      expect(closed.code).to.equal(2);
      expect(closed.stderr).to.include("cannot reach the API at http://127.0.0.1:9");
    });
  });

  // Last (mocha runs nested suites in order, after the plain tests): they change department C's wallet on chain,
  // after which the API can no longer decide as C. The administrator proposes through the API (its administration
  // key, whose nonces the API sequences); activation, open to anyone once due, is sent from a wallet of the test's.
  describe("after department wallet changes on chain", function () {
    const registryAddress = () => deployment.contracts.ApprovalRegistry;

    /**
     * Proposes `wallet` (held by the department, i.e. not by the platform) for C through the API, with the wallet's
     * proof that it holds its key; its receipt.
     */
    async function propose(wallet: { address: string; signTypedData: Wallet["signTypedData"] }) {
      const change = { custody: "DEPARTMENT_HELD" as const, walletAddress: wallet.address };
      const proof = await keyProof(api, adminToken, { code: codes.C, ...change }, eoaKeySigner(wallet));
      const proposed = await admin.post(`/departments/${codes.C}/wallet-change`, { ...change, keyProof: proof });
      expect(proposed.status, JSON.stringify(proposed.body)).to.equal(200);
      return (await chain.getTransactionReceipt(proposed.body.transactionHash))!;
    }

    /** activateDepartmentWallet(C) from a throw-away funded wallet; its receipt. */
    async function activate() {
      const anyone = Wallet.createRandom().connect(chain);
      await chain.send("anvil_setBalance", [anyone.address, "0x3635c9adc5dea00000"]);
      const receipt = await (
        await anyone.sendTransaction({
          to: registryAddress(),
          data: registryAbi.encodeFunctionData("activateDepartmentWallet", [b32(codes.C)]),
        })
      ).wait();
      expect(receipt?.status).to.equal(1);
      return receipt!;
    }

    it("a wallet change that waits out its delay in public is reported and clean: earlier decisions keep the wallet of their time", async function () {
      const { issued } = scenarios;
      const nextKey = Wallet.createRandom();
      const next = nextKey.address;
      await propose(nextKey);
      await chain.send("evm_increaseTime", [deployment.walletDelay]);
      await activate();

      const { code: exit, report } = await auditJson("--token", String(issued.tokenId));
      expect(exit, JSON.stringify(report.findings)).to.equal(0);
      const department = report.departments.find((d: Json) => d.code === codes.C);
      expect(department.wallet).to.equal(next);
      expect(department.changes.map((c: Json) => c.kind)).to.deep.equal(["REGISTERED", "PROPOSED", "ROTATED"]);
      expect(department.changes[2]).to.deep.include({
        previousWallet: departments.C.walletAddress,
        wallet: next,
        delayRespected: true,
      });
      expect(department.changes[2].waitedSeconds).to.be.at.least(deployment.walletDelay);
      const decision = report.licences[0].decisions.find((d: Json) => d.departmentCode === codes.C);
      expect(decision).to.deep.include({
        signer: departments.C.walletAddress,
        departmentWallet: departments.C.walletAddress,
        walletMatches: true,
      });
    });

    it("flags a rotation forced inside its window and the decision its new wallet made (exit 1)", async function () {
      // A request whose first stage A and B approve through the API; C's turn comes next (this file's workflow,
      // which the demo replaced).
      await registerWorkflowVersion(api, adminToken, definition);
      const forged = await submittedRequest("forged");
      await decide(forged, "A", "approve", { remarks: "plan ok", reviewedDocuments: [forged.docs.SITE_PLAN] });
      await decide(forged, "B", "approve", { remarks: "deed ok", reviewedDocuments: [forged.docs.OWNERSHIP_DEED] });

      // The administrator proposes an intruder's wallet for C. The contract refuses to activate it before
      // its delay, so the test moves the pending change's effectiveAt to now in storage (anvil_setStorageAt), as
      // a tampered node would, and activates it at once: the chain now shows a rotation inside its window.
      const intruder = Wallet.createRandom().connect(chain);
      await chain.send("anvil_setBalance", [intruder.address, "0x3635c9adc5dea00000"]);
      const [, heldWallet] = await call(registryAbi, registryAddress(), "departmentByCode", [b32(codes.C)]);
      const proposal = await propose(new Wallet(intruder.privateKey));
      const departmentId = Number((await call(registryAbi, registryAddress(), "departmentByCode", [b32(codes.C)]))[0]);
      let slot: string | undefined;
      for (let base = 0; base < 32 && !slot; base++) {
        const candidate = keccak256(AbiCoder.defaultAbiCoder().encode(["uint256", "uint256"], [departmentId, base]));
        if (
          (BigInt(await chain.getStorage(registryAddress(), candidate)) & ((1n << 160n) - 1n)) ===
          BigInt(intruder.address)
        )
          slot = candidate;
      }
      expect(slot, "the pending wallet change's storage slot").to.be.a("string");
      const word = BigInt(await chain.getStorage(registryAddress(), slot!));
      const now = BigInt((await chain.getBlock("latest"))!.timestamp);
      await chain.send("anvil_setStorageAt", [
        registryAddress(),
        slot,
        zeroPadValue(toBeHex((word & ((1n << 168n) - 1n)) | (now << 168n)), 32),
      ]);
      const activation = await activate();

      // The intruder decides for C, in the current stage and round, on the documents' latest hashes and C's next
      // nonce: the licence is issued.
      const [progress] = await call(registryAbi, registryAddress(), "progressOf", [forged.tokenId]);
      const [, , latest] = await call(documentsAbi, deployment.contracts.DocumentRegistry, "documentsOf", [
        forged.tokenId,
      ]);
      const anchored = await chain.getLogs({
        address: deployment.contracts.DocumentRegistry,
        topics: [documentsAbi.getEvent("DocumentAnchored")!.topicHash, zeroPadValue(toBeHex(forged.tokenId), 32)],
        fromBlock: 0,
      });
      const hashAt = new Map(
        anchored.map((log) => {
          const { docIndex, version, sha256Hash } = documentsAbi.parseLog(log)!.args;
          return [`${docIndex}:${version}`, sha256Hash as string];
        }),
      );
      const [record] = await call(registryAbi, registryAddress(), "departmentRecord", [departmentId]);
      const intruderDecision = {
        tokenId: forged.tokenId,
        departmentId,
        stage: progress.stage,
        round: progress.stageStartedAt,
        decision: 1,
        reasonCode: 0,
        reviewedMask: 0,
        documents: (latest as bigint[]).map((version, index) => hashAt.get(`${index}:${version}`)!),
        remarksHash: id("forged"),
        nonce: record.nonce,
        deadline: BigInt((await chain.getBlock("latest"))!.timestamp) + 600n,
      };
      const approval = await (
        await intruder.sendTransaction({
          to: registryAddress(),
          data: registryAbi.encodeFunctionData("decide", [intruderDecision]),
        })
      ).wait();
      expect((await call(tokenAbi, deployment.contracts.LicenceToken, "licence", [forged.tokenId]))[0].status).to.equal(
        4n,
      ); // Approved

      const { code: exit, report } = await auditJson("--token", String(forged.tokenId));
      expect(exit).to.equal(1);
      expect(report.ok).to.equal(false);
      const rotation = report.findings.filter((f: string) =>
        f.startsWith(`${codes.C}'s wallet became ${intruder.address} at block ${activation.blockNumber}`),
      );
      expect(rotation, JSON.stringify(report.findings)).to.have.length(1);
      expect(rotation[0]).to.match(
        new RegExp(
          `, \\d+ s after its proposal \\(block ${proposal.blockNumber}, tx ${proposal.hash}\\): the wallet delay is ${deployment.walletDelay} s$`,
        ),
      );
      const licence = report.licences[0];
      expect(licence.status).to.equal("APPROVED");
      const decision = licence.decisions.find((d: Json) => d.transactionHash === approval!.hash);
      expect(decision).to.deep.include({
        departmentCode: codes.C,
        signer: intruder.address,
        sender: intruder.address,
        route: "SENT",
        departmentWallet: intruder.address,
        walletMatches: false,
      });
      // C held its own key since the previous test, and that key never consented to the intruder's wallet.
      expect(licence.findings).to.have.length(2);
      expect(licence.findings[0]).to.equal(
        `decision APPROVED of ${codes.C} in stage 2 (tx ${approval!.hash}) on licence ${forged.tokenId} was signed by ${intruder.address}, which ${codes.C} got at block ${activation.blockNumber} (tx ${activation.hash}) through a wallet change its outgoing department-held wallet ${heldWallet} did not consent to`,
      );
      expect(licence.findings[1]).to.equal(
        `decision APPROVED of ${codes.C} in stage 2 (tx ${approval!.hash}) was made by ${intruder.address}, which became ${codes.C}'s wallet at block ${activation.blockNumber} without waiting the wallet delay after its proposal (proposed at block ${proposal.blockNumber})`,
      );
      const text = await audit("--token", String(forged.tokenId));
      expect(text.code).to.equal(1);
      expect(text.stdout)
        .to.include("(DELAY NOT RESPECTED)")
        .and.include("WALLET MISMATCH")
        .and.match(/NOT OK: 1 licence\(s\), [2-9] finding\(s\)/);
    });
  });
});
