/**
 * Decisions signed by a department's reviewers' passkeys, audited on the real contracts (anvil, deploy.ts, the
 * auditor's tool as a child process): governance registers a DepartmentPasskeyAccount (2 of 3) as a department's
 * wallet, a licence is decided by two reviewers' assertions relayed by the operator, and the auditor verifies each
 * assertion itself, names the reviewers, reports the origin and RP ID hash, and lists the account's reviewer
 * history. An account whose threshold was lowered behind its events' back accepts one assertion: the auditor does
 * not. Needs the contracts compiled (`npx hardhat build --no-tests`).
 */
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { expect } from "chai";
import {
  Contract,
  ContractFactory,
  TypedDataEncoder,
  Wallet,
  encodeBytes32String,
  id,
  keccak256,
  toBeHex,
  zeroPadValue,
  type JsonRpcSigner,
} from "ethers";
import {
  ApprovalRegistryAbi,
  DECISION_TYPES,
  DEPARTMENT_KEY_TYPES,
  DocumentRegistryAbi,
  LicenceTokenAbi,
} from "../../abis/index.ts";
import { REVIEWED_PASSKEY_ACCOUNT_CODE_HASH } from "../../scripts/audit/passkeyAudit.ts";
import { createPasskey, signWithPasskeys, type Passkey } from "../contracts/helpers/passkeys.ts";
import { REPO_ROOT } from "./auditCli.ts";
import { localPlatform, type LocalPlatform } from "./localPlatform.ts";

const run = promisify(execFile);
const b32 = encodeBytes32String;
const FUNDS = "0x3635c9adc5dea00000";
const ARTIFACT = path.join(
  REPO_ROOT,
  "artifacts",
  "contracts",
  "DepartmentPasskeyAccount.sol",
  "DepartmentPasskeyAccount.json",
);
const REVIEWER_CHANGE_TYPES = {
  ReviewerChange: [
    { name: "add", type: "bytes[]" },
    { name: "remove", type: "bytes[]" },
    { name: "threshold", type: "uint16" },
    { name: "nonce", type: "uint64" },
    { name: "deadline", type: "uint64" },
  ],
};

describe("auditor: passkey departments' decisions verified by the auditor itself (anvil, deploy.ts)", function () {
  this.timeout(300_000);
  const operator = Wallet.createRandom();
  const admin = Wallet.createRandom();
  const [a, b, c] = [createPasskey(), createPasskey(), createPasskey()];
  const reviewerId = (p: Passkey) => keccak256(p.key);
  let p: LocalPlatform;
  let governance: JsonRpcSigner;
  let registry: Contract;
  let token: Contract;
  let documents: Contract;
  let account: Contract;
  let domain: Record<string, unknown>;
  let artifact: { abi: never; bytecode: string; deployedBytecode: string };

  const mined = async (tx: Promise<{ wait(): Promise<unknown> }>) => (await tx).wait();
  const asOperator = (contract: Contract) => contract.connect(operator.connect(p.provider)) as Contract;

  /** Licence `tokenId` submitted with one document, decided by `signers`' passkeys, relayed by the operator. */
  async function decidedByPasskeys(tokenId: number, signers: Passkey[]) {
    await mined(
      asOperator(token).mint(Wallet.createRandom().address, tokenId, b32("PERMIT"), id(`applicant ${tokenId}`)),
    );
    await mined(
      asOperator(documents).anchorDocument(
        tokenId,
        zeroPadValue(toBeHex(tokenId), 16),
        b32("SITE_PLAN"),
        id(`plan ${tokenId}`),
      ),
    );
    await mined(asOperator(registry).submit(tokenId));
    const progress = await registry.progressOf(tokenId);
    const record = await registry.departmentRecord(1);
    const now = (await p.provider.getBlock("latest"))!.timestamp;
    const decision = {
      tokenId,
      departmentId: 1,
      stage: progress.stage,
      round: progress.stageStartedAt,
      decision: 1,
      reasonCode: 0,
      reviewedMask: 0,
      documents: [id(`plan ${tokenId}`)],
      remarksHash: id("fine"),
      nonce: record.nonce,
      deadline: now + 3600,
    };
    const digest = TypedDataEncoder.hash(domain, DECISION_TYPES, decision);
    await mined(asOperator(registry).decideBySig(decision, signWithPasskeys(digest, signers)));
  }

  before(async function () {
    p = await localPlatform(31337, { OPERATOR_ADDRESS: operator.address, ADMIN_ADDRESS: admin.address });
    governance = await p.provider.getSigner(0);
    const { contracts } = p.deployment;
    registry = new Contract(contracts.ApprovalRegistry, ApprovalRegistryAbi as never, governance);
    token = new Contract(contracts.LicenceToken, LicenceTokenAbi as never, governance);
    documents = new Contract(contracts.DocumentRegistry, DocumentRegistryAbi as never, governance);
    await p.provider.send("anvil_setBalance", [operator.address, FUNDS]);
    const d = await registry.eip712Domain();
    domain = { name: d[1], version: d[2], chainId: d[3], verifyingContract: d[4], salt: d[5] };

    artifact = JSON.parse(await readFile(ARTIFACT, "utf8"));
    const factory = new ContractFactory(artifact.abi, artifact.bytecode, governance);
    account = (await factory.deploy([a.key, b.key, c.key], 2)) as Contract;
    await account.waitForDeployment();
    const wallet = await account.getAddress();
    // The key proof is the account's own signature: two of its reviewers' passkeys.
    const proof = { code: b32("PASSKEYS"), wallet, custody: 1 };
    const proofDigest = TypedDataEncoder.hash(domain, DEPARTMENT_KEY_TYPES, proof);
    await mined(registry.registerDepartment(b32("PASSKEYS"), wallet, 1, signWithPasskeys(proofDigest, [a, b])));
    await mined(
      registry.registerWorkflow(b32("PERMIT"), id("permit v1"), 0, [
        {
          executionType: 0,
          completion: 0,
          threshold: 0,
          onTimeout: 0,
          onRejection: 0,
          timeoutSeconds: 0,
          mandatoryMask: 0,
          departments: [b32("PASSKEYS")],
        },
      ]),
    );
  });

  after(async function () {
    await p?.close();
  });

  it("the reviewed account's code hash is the compiled DepartmentPasskeyAccount's", function () {
    expect(keccak256(artifact.deployedBytecode)).to.equal(REVIEWED_PASSKEY_ACCOUNT_CODE_HASH);
  });

  it("a licence decided by two reviewers' assertions relayed by the operator audits clean, both reviewers verified, the account's reviewers listed", async function () {
    await decidedByPasskeys(1, [a, c]);
    expect((await token.licence(1)).status).to.equal(4n); // APPROVED
    const { code, report, stderr } = await p.audit("--token", "1");
    expect(stderr).to.equal("");
    expect([...report.findings, ...report.licences[0].findings]).to.deep.equal([]);
    expect(code).to.equal(0);
    const [decision] = report.licences[0].decisions;
    expect([decision.departmentCode, decision.route, decision.signedBy]).to.deep.equal([
      "PASSKEYS",
      "RELAYED",
      "department-signed",
    ]);
    const rpIdHash = "0x" + (await import("node:crypto")).createHash("sha256").update("licences.example").digest("hex");
    expect(decision.passkeys).to.have.deep.members(
      [a, c].map((k) => ({ reviewerId: reviewerId(k), origin: "https://licences.example", rpIdHash, verified: true })),
    );
    const [department] = report.passkeyDepartments;
    expect(department).to.deep.include({
      departmentCode: "PASSKEYS",
      account: await account.getAddress(),
      reviewedCode: true,
      threshold: 2,
    });
    expect(department.reviewers).to.have.members([a, b, c].map(reviewerId));
    expect(department.history.map((h: any) => [h.kind, h.reviewerId ?? h.threshold])).to.deep.equal([
      ["ADDED", reviewerId(a)],
      ["ADDED", reviewerId(b)],
      ["ADDED", reviewerId(c)],
      ["THRESHOLD", 2],
    ]);
    const text = await run(
      process.execPath,
      [
        "scripts/audit.ts",
        "--rpc",
        p.chain.rpcUrl,
        "--deployment",
        p.deploymentFile,
        "--build",
        p.buildFile,
        "--token",
        "1",
      ],
      { cwd: REPO_ROOT },
    );
    expect(text.stdout)
      .to.include(`PASSKEYS passkey account ${await account.getAddress()}  2 of 3 reviewers`)
      .and.include(`passkey of reviewer ${reviewerId(a)}  origin https://licences.example`)
      .and.include(`key proof by`);
    // The reviewers' consent to the account: the registration's key proof, verified like a decision.
    expect(department.keyProofs).to.have.length(1);
    expect(department.keyProofs[0].passkeys.map((k: any) => [k.reviewerId, k.verified])).to.have.deep.members([
      [reviewerId(a), true],
      [reviewerId(b), true],
    ]);
  });

  it("with --expect-origin of another origin, both reviewers' assertions are findings (origin and RP ID hash); with ours, none", async function () {
    const other = await p.audit("--token", "1", "--expect-origin", "https://console.example");
    expect(other.code).to.equal(1);
    const findings: string[] = other.report.licences[0].findings;
    expect(findings).to.have.length(4);
    for (const reviewer of [a, c]) {
      const named = findings.filter((f) => f.includes(`the assertion of reviewer ${reviewerId(reviewer)}`));
      expect(named).to.have.length(2);
      expect(named[0]).to.include("on licence 1").and.include("PASSKEYS").and.include("not https://console.example");
      expect(named[1]).to.include("carries RP ID hash");
    }
    // The registration's key proof was made for the same origin: one finding naming the registration.
    expect(other.report.findings).to.have.length(1);
    expect(other.report.findings[0])
      .to.include("the registration of PASSKEYS")
      .and.include("was made for origin https://licences.example, not https://console.example");
    const ours = await p.audit("--token", "1", "--expect-origin", "https://licences.example/console");
    expect([...ours.report.findings, ...ours.report.licences[0].findings]).to.deep.equal([]);
    expect(ours.code).to.equal(0);
  });

  it("a reviewer removed by the reviewers appears in the account's history with its block", async function () {
    const change = {
      add: [],
      remove: [b.key],
      threshold: 2,
      nonce: 0,
      deadline: (await p.provider.getBlock("latest"))!.timestamp + 3600,
    };
    const digest = TypedDataEncoder.hash(
      { name: "DepartmentPasskeyAccount", version: "1", chainId: 31337, verifyingContract: await account.getAddress() },
      REVIEWER_CHANGE_TYPES,
      change,
    );
    expect(await account.changeDigest(change)).to.equal(digest);
    const receipt = (await mined(asOperator(account).changeReviewers(change, signWithPasskeys(digest, [a, c])))) as {
      blockNumber: number;
    };
    const { code, report } = await p.audit("--token", "1");
    expect(code).to.equal(0);
    const [department] = report.passkeyDepartments;
    expect(department.reviewers).to.have.members([a, c].map(reviewerId));
    expect(department.history.at(-1)).to.deep.include({
      kind: "REMOVED",
      reviewerId: reviewerId(b),
      blockNumber: receipt.blockNumber,
    });
  });

  it("an account whose threshold was lowered behind its events accepts one assertion: the auditor finds one reviewer short, and the account's answer contradicted", async function () {
    const wallet = await account.getAddress();
    // Slot 2 packs _threshold (uint16, low bytes) and _changeNonce (uint64): 2 and 1 after the change above.
    const slot = toBeHex(2, 32);
    expect(BigInt(await p.provider.getStorage(wallet, 2))).to.equal((1n << 16n) | 2n);
    await p.provider.send("anvil_setStorageAt", [wallet, slot, toBeHex((1n << 16n) | 1n, 32)]);
    await decidedByPasskeys(2, [a]);
    const { code, report } = await p.audit("--token", "2");
    expect(code).to.equal(1);
    expect(report.findings).to.deep.equal([
      `PASSKEYS's passkey account ${wallet} answers threshold() 1, but its ThresholdSet events end at 2`,
    ]);
    const findings: string[] = report.licences[0].findings;
    expect(findings).to.have.length(2);
    expect(findings[0])
      .to.include("decision APPROVED of PASSKEYS in stage 1")
      .and.include("on licence 2")
      .and.include("1 reviewer(s) verifiably signed, but the account's threshold then was 2");
    expect(findings[1]).to.include(
      `the passkey account ${wallet} answers that the signature is valid, but the auditor's own check finds it not valid`,
    );
    expect(report.licences[0].decisions[0].passkeys).to.deep.equal([
      {
        reviewerId: reviewerId(a),
        origin: "https://licences.example",
        rpIdHash: report.licences[0].decisions[0].passkeys[0].rpIdHash,
        verified: true,
      },
    ]);
  });

  it("a department registered with a key proof one reviewer short (threshold lowered behind the events): a finding naming the department and the reviewers' shortfall", async function () {
    const factory = new ContractFactory(artifact.abi, artifact.bytecode, governance);
    const solo = (await factory.deploy([a.key, b.key], 2)) as Contract;
    await solo.waitForDeployment();
    const wallet = await solo.getAddress();
    await p.provider.send("anvil_setStorageAt", [wallet, toBeHex(2, 32), toBeHex(1, 32)]);
    const proof = { code: b32("SOLO"), wallet, custody: 1 };
    const digest = TypedDataEncoder.hash(domain, DEPARTMENT_KEY_TYPES, proof);
    await mined(registry.registerDepartment(b32("SOLO"), wallet, 1, signWithPasskeys(digest, [a])));
    const { code, report } = await p.audit("--token", "1");
    expect(code).to.equal(1);
    const registration = report.findings.filter((f: string) => f.startsWith("the registration of SOLO"));
    expect(registration).to.have.length(1);
    expect(registration[0])
      .to.include(`with wallet ${wallet}`)
      .and.include("its key proof: 1 reviewer(s) verifiably signed, but the account's threshold then was 2")
      .and.include("answers that the signature is valid, but the auditor's own check finds it not valid");
    const department = report.passkeyDepartments.find((d: any) => d.departmentCode === "SOLO");
    expect(department.keyProofs[0].passkeys).to.have.length(1);
  });
});
