/**
 * The decision checks on the real contracts (anvil, deploy.ts, the auditor's tool as a child process): a licence
 * through two stages decided by a custodial department (decide from its own wallet), a department-held key
 * (decideBySig relayed by the operator) and a department-held Safe (execTransaction -> decide, found in the
 * node's call trace) is clean, each decision labelled by custody; then the department-held key is replaced after
 * the delay without its consent, and the new wallet's decision on the next licence is a finding naming the
 * department, the wallet and the licence. Needs the contracts compiled (`npx hardhat build --no-tests`).
 */
import { expect } from "chai";
import {
  Contract,
  TypedDataEncoder,
  Wallet,
  encodeBytes32String,
  id,
  toBeHex,
  zeroPadValue,
  type HDNodeWallet,
  type JsonRpcSigner,
} from "ethers";
import {
  ApprovalRegistryAbi,
  DECISION_TYPES,
  DEPARTMENT_KEY_TYPES,
  DocumentRegistryAbi,
  LicenceTokenAbi,
} from "../../abis/index.ts";
import { deploySafe, safeAbi, safeSignature } from "../stack/support/safeWallet.ts";
import { startLocalChain } from "../../scripts/stack/localChain.ts";
import { freePort } from "../../scripts/stack/ports.ts";
import { runAudit } from "./auditCli.ts";
import { fromSafe, localPlatform, type LocalPlatform } from "./localPlatform.ts";

const b32 = encodeBytes32String;
const FUNDS = "0x3635c9adc5dea00000";

describe("auditor: decisions against their calls on the real contracts (anvil, deploy.ts)", function () {
  this.timeout(300_000);
  const operator = Wallet.createRandom();
  const admin = Wallet.createRandom();
  const fire = Wallet.createRandom(); // custodial
  const police = Wallet.createRandom(); // department-held key
  const owner = Wallet.createRandom(); // the Safe's owner (WATER, department-held)
  let p: LocalPlatform;
  let governance: JsonRpcSigner;
  let registry: Contract;
  let token: Contract;
  let documents: Contract;
  let safe: Contract;
  let domain: Record<string, unknown>;

  const as = (contract: Contract, wallet: Wallet | HDNodeWallet) =>
    contract.connect(wallet.connect(p.provider)) as Contract;
  const mined = async (tx: Promise<{ wait(): Promise<unknown> }>) => (await tx).wait();
  const keyProof = async (code: string, wallet: string, custody: number, signer: Wallet | HDNodeWallet | "safe") => {
    const value = { code: b32(code), wallet, custody };
    if (signer !== "safe") return signer.signTypedData(domain, DEPARTMENT_KEY_TYPES, value);
    return safeSignature(wallet, 31337, TypedDataEncoder.hash(domain, DEPARTMENT_KEY_TYPES, value), [owner]);
  };
  const fund = (address: string) => p.provider.send("anvil_setBalance", [address, FUNDS]);

  /** A submitted request `tokenId` with one document. */
  async function submitted(tokenId: number) {
    await mined(
      as(token, operator).mint(Wallet.createRandom().address, tokenId, b32("PERMIT"), id(`applicant ${tokenId}`)),
    );
    await mined(
      as(documents, operator).anchorDocument(
        tokenId,
        zeroPadValue(toBeHex(tokenId), 16),
        b32("SITE_PLAN"),
        id(`plan ${tokenId}`),
      ),
    );
    await mined(as(registry, operator).submit(tokenId));
  }

  /** The decision department `departmentId` makes now on `tokenId`: approve every document at the current round. */
  async function decision(tokenId: number, departmentId: number) {
    const progress = await registry.progressOf(tokenId);
    const record = await registry.departmentRecord(departmentId);
    const now = (await p.provider.getBlock("latest"))!.timestamp;
    return {
      tokenId,
      departmentId,
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
  }

  async function relayed(tokenId: number, departmentId: number, signer: Wallet | HDNodeWallet) {
    const value = await decision(tokenId, departmentId);
    await mined(as(registry, operator).decideBySig(value, await signer.signTypedData(domain, DECISION_TYPES, value)));
  }

  /** FIRE, then POLICE (stage 1, sequential), then WATER's Safe (stage 2). */
  async function review(tokenId: number, policeKey: Wallet | HDNodeWallet) {
    await submitted(tokenId);
    await mined(as(registry, fire).decide(await decision(tokenId, 1)));
    await relayed(tokenId, 2, policeKey);
    const data = registry.interface.encodeFunctionData("decide", [await decision(tokenId, 3)]);
    await fromSafe(safe, await registry.getAddress(), data, [owner]);
  }

  before(async function () {
    await Promise.all([operator, admin].map((w) => Promise.resolve(w.address)));
    p = await localPlatform(31337, { OPERATOR_ADDRESS: operator.address, ADMIN_ADDRESS: admin.address });
    governance = await p.provider.getSigner(0);
    const { contracts } = p.deployment;
    registry = new Contract(contracts.ApprovalRegistry, ApprovalRegistryAbi as never, governance);
    token = new Contract(contracts.LicenceToken, LicenceTokenAbi as never, governance);
    documents = new Contract(contracts.DocumentRegistry, DocumentRegistryAbi as never, governance);
    for (const w of [operator, admin, fire, police]) await fund(w.address);
    const d = await registry.eip712Domain();
    domain = { name: d[1], version: d[2], chainId: d[3], verifyingContract: d[4], salt: d[5] };
    const water = await deploySafe(p.provider, [owner.address], 1);
    safe = new Contract(water, await safeAbi(), p.provider);

    await mined(
      registry.registerDepartment(b32("FIRE"), fire.address, 0, await keyProof("FIRE", fire.address, 0, fire)),
    );
    await mined(
      registry.registerDepartment(
        b32("POLICE"),
        police.address,
        1,
        await keyProof("POLICE", police.address, 1, police),
      ),
    );
    await mined(registry.registerDepartment(b32("WATER"), water, 1, await keyProof("WATER", water, 1, "safe")));
    const stage = (executionType: number, completion: number, departments: string[]) => ({
      executionType,
      completion,
      threshold: 0,
      onTimeout: 0,
      onRejection: 0,
      timeoutSeconds: 0,
      mandatoryMask: 0,
      departments: departments.map(b32),
    });
    await mined(
      registry.registerWorkflow(b32("PERMIT"), id("permit v1"), 0, [
        stage(0, 0, ["FIRE", "POLICE"]),
        stage(1, 1, ["WATER"]),
      ]),
    );
  });

  after(async function () {
    await p?.close();
  });

  it("a review by a custodial wallet, a relayed department-held key and a Safe's call is clean, each decision labelled by custody", async function () {
    await review(1, police);
    expect((await token.licence(1)).status).to.equal(4n); // APPROVED
    const { code, report, stderr } = await p.audit("--token", "1");
    expect(stderr).to.equal("");
    expect([...report.findings, ...report.licences[0].findings]).to.deep.equal([]);
    expect(code).to.equal(0);
    const decisions = report.licences[0].decisions;
    expect(decisions.map((d: any) => [d.departmentCode, d.route, d.signedBy, d.walletMatches])).to.deep.equal([
      ["FIRE", "SENT", "platform-signed", true],
      ["POLICE", "RELAYED", "department-signed", true],
      ["WATER", "SENT", "department-signed", true],
    ]);
    expect(decisions[2].sender).to.equal(await safe.getAddress());
  });

  it("a department-held key replaced after the delay without its consent: the new wallet's decision is a finding naming department, wallet and licence", async function () {
    const taker = Wallet.createRandom();
    await mined(
      registry.proposeDepartmentWallet(
        b32("POLICE"),
        taker.address,
        1,
        await keyProof("POLICE", taker.address, 1, taker),
      ),
    );
    await p.provider.send("evm_increaseTime", [Number(p.deployment.walletDelay) + 1]);
    await mined(as(registry, operator).activateDepartmentWallet(b32("POLICE")));
    await review(2, taker);
    const { code, report } = await p.audit("--all");
    expect(code).to.equal(1);
    expect(report.findings).to.deep.equal([]);
    expect(report.licences[0].findings).to.deep.equal([]);
    const findings: string[] = report.licences[1].findings;
    expect(findings).to.have.length(1);
    expect(findings[0])
      .to.include("decision APPROVED of POLICE in stage 1")
      .and.include(`on licence 2 was signed by ${taker.address}`)
      .and.include(`did not consent to`)
      .and.include(police.address);
  });

  it("restarted from its snapshot (no state for old blocks), the same licence audits clean: signatures checked at the latest block, and said so", async function () {
    expect(await p.chain.stop(), "the snapshot is saved").to.equal(true);
    const restarted = await startLocalChain({ dataDir: p.dir, port: await freePort(), chainId: 31337 });
    try {
      const { code, report, stderr } = await runAudit(
        restarted.rpcUrl,
        p.deploymentFile,
        "--build",
        p.buildFile,
        "--token",
        "1",
      );
      expect(stderr).to.equal("");
      expect([...report.findings, ...report.licences[0].findings]).to.deep.equal([]);
      expect(code).to.equal(0);
      expect(report.licences[0].decisions.map((d: any) => [d.departmentCode, d.signedBy])).to.deep.equal([
        ["FIRE", "platform-signed"],
        ["POLICE", "department-signed"],
        ["WATER", "department-signed"],
      ]);
      expect(report.notes).to.include(
        "the node keeps no state for some past blocks: wallet code, EIP-1271 signatures and the registry's EIP-712 domain of decisions and key proofs made then were read at the latest block",
      );
    } finally {
      await restarted.kill();
    }
  });
});
