/**
 * Decisions signed by a department's reviewers' passkeys, audited on the real contracts (anvil, deploy.ts, the
 * auditor's tool as a child process): governance registers a DepartmentPasskeyAccount (2 of 3) as a department's
 * wallet, a licence is decided by two reviewers' assertions relayed by the operator, and the auditor verifies each
 * assertion itself, names the reviewers, reports the origin and RP ID hash, and lists the account's reviewer
 * history. An account whose threshold was lowered behind its events' back accepts one assertion: the auditor does
 * not. Needs the contracts compiled (`npx hardhat build --no-tests`).
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { expect } from "chai";
import {
  Contract,
  ContractFactory,
  TypedDataEncoder,
  Wallet,
  encodeBytes32String as b32,
  id,
  keccak256,
  toBeHex,
} from "ethers";
import { DECISION_TYPES, DEPARTMENT_KEY_TYPES } from "../../abis/index.ts";
import { REVIEWED_PASSKEY_ACCOUNT_CODE_HASH } from "../../scripts/audit/passkeyAudit.ts";
import { createPasskey, signWithPasskeys, type Passkey } from "../contracts/helpers/passkeys.ts";
import { REPO_ROOT } from "./auditCli.ts";
import { localPlatform, platformContracts, stage, type LocalPlatform } from "./localPlatform.ts";

const ARTIFACT = path.join(REPO_ROOT, "artifacts/contracts/DepartmentPasskeyAccount.sol/DepartmentPasskeyAccount.json");
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
  const [a, b, c] = [createPasskey(), createPasskey(), createPasskey()];
  const reviewerId = (p: Passkey) => keccak256(p.key);
  let p: LocalPlatform;
  let x: Awaited<ReturnType<typeof platformContracts>>;
  let account: Contract;
  let factory: ContractFactory;
  let artifact: { abi: never; bytecode: string; deployedBytecode: string };

  /** Licence `tokenId` submitted with one document, decided by `signers`' passkeys, relayed by the operator. */
  async function decidedByPasskeys(tokenId: number, signers: Passkey[]) {
    await x.submitted(tokenId);
    const decision = await x.decision(tokenId, 1);
    const digest = TypedDataEncoder.hash(x.domain, DECISION_TYPES, decision);
    await x.mined(x.as(x.registry, operator).decideBySig(decision, signWithPasskeys(digest, signers)));
  }

  /** A passkey account of `keys` registered as department `code`, its key proof signed by `signers`. */
  async function registered(code: string, keys: Passkey[], signers: Passkey[], threshold?: number) {
    const deployed = (await factory.deploy(
      keys.map((k) => k.key),
      2,
    )) as Contract;
    await deployed.waitForDeployment();
    const wallet = await deployed.getAddress();
    if (threshold) await p.provider.send("anvil_setStorageAt", [wallet, toBeHex(2, 32), toBeHex(threshold, 32)]);
    const digest = TypedDataEncoder.hash(x.domain, DEPARTMENT_KEY_TYPES, { code: b32(code), wallet, custody: 1 });
    await x.mined(x.registry.registerDepartment(b32(code), wallet, 1, signWithPasskeys(digest, signers)));
    return deployed;
  }

  before(async function () {
    p = await localPlatform(31337, {
      OPERATOR_ADDRESS: operator.address,
      ADMIN_ADDRESS: Wallet.createRandom().address,
    });
    x = await platformContracts(p, await p.provider.getSigner(0), operator);
    artifact = JSON.parse(await readFile(ARTIFACT, "utf8"));
    factory = new ContractFactory(artifact.abi, artifact.bytecode, await p.provider.getSigner(0));
    // The key proof is the account's own signature: two of its reviewers' passkeys.
    account = await registered("PASSKEYS", [a, b, c], [a, b]);
    await x.mined(x.registry.registerWorkflow(b32("PERMIT"), id("permit v1"), 0, [stage(["PASSKEYS"], 0)]));
  });

  after(async function () {
    await p?.close();
  });

  it("the reviewed account's code hash is the compiled DepartmentPasskeyAccount's", function () {
    expect(keccak256(artifact.deployedBytecode)).to.equal(REVIEWED_PASSKEY_ACCOUNT_CODE_HASH);
  });

  it("a licence decided by two reviewers' assertions relayed by the operator audits clean, both reviewers verified, the account's reviewers listed", async function () {
    await decidedByPasskeys(1, [a, c]);
    expect((await x.token.licence(1)).status).to.equal(4n); // APPROVED
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
    expect(await p.auditText("--token", "1"))
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
    const receipt = (await x.mined(
      x.as(account, operator).changeReviewers(change, signWithPasskeys(digest, [a, c])),
    )) as {
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
    const wallet = await (await registered("SOLO", [a, b], [a], 1)).getAddress();
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
