/**
 * The decision checks on the real contracts (anvil, deploy.ts, the auditor's tool as a child process): a licence
 * through two stages decided by a custodial department (decide from its own wallet), a department-held key
 * (decideBySig relayed by the operator) and a department-held Safe (execTransaction -> decide, found in the
 * node's call trace) is clean, each decision labelled by custody; then the department-held key is replaced after
 * the delay without its consent, and the new wallet's decision on the next licence is a finding naming the
 * department, the wallet and the licence. Needs the contracts compiled (`npx hardhat build --no-tests`).
 */
import { expect } from "chai";
import { Contract, TypedDataEncoder, Wallet, encodeBytes32String as b32, id, type HDNodeWallet } from "ethers";
import { DECISION_TYPES, DEPARTMENT_KEY_TYPES } from "../../abis/index.ts";
import { deploySafe, safeAbi, safeSignature } from "../stack/support/safeWallet.ts";
import { startLocalChain } from "../../scripts/stack/localChain.ts";
import { freePort } from "../../scripts/stack/ports.ts";
import { runAudit } from "./auditCli.ts";
import { fromSafe, localPlatform, platformContracts, stage, type LocalPlatform } from "./localPlatform.ts";

describe("auditor: decisions against their calls on the real contracts (anvil, deploy.ts)", function () {
  this.timeout(300_000);
  const operator = Wallet.createRandom();
  const fire = Wallet.createRandom(); // custodial
  const police = Wallet.createRandom(); // department-held key
  const owner = Wallet.createRandom(); // the Safe's owner (WATER, department-held)
  let p: LocalPlatform;
  let c: Awaited<ReturnType<typeof platformContracts>>;
  let safe: Contract;

  async function relayed(tokenId: number, departmentId: number, signer: Wallet | HDNodeWallet) {
    const value = await c.decision(tokenId, departmentId);
    const signature = await signer.signTypedData(c.domain, DECISION_TYPES, value);
    await c.mined(c.as(c.registry, operator).decideBySig(value, signature));
  }

  /** FIRE, then POLICE (stage 1, sequential), then WATER's Safe (stage 2). */
  async function review(tokenId: number, policeKey: Wallet | HDNodeWallet) {
    await c.submitted(tokenId);
    await c.mined(c.as(c.registry, fire).decide(await c.decision(tokenId, 1)));
    await relayed(tokenId, 2, policeKey);
    const data = c.registry.interface.encodeFunctionData("decide", [await c.decision(tokenId, 3)]);
    await fromSafe(safe, await c.registry.getAddress(), data, [owner]);
  }

  before(async function () {
    p = await localPlatform(31337, {
      OPERATOR_ADDRESS: operator.address,
      ADMIN_ADDRESS: Wallet.createRandom().address,
    });
    c = await platformContracts(p, await p.provider.getSigner(0), operator);
    for (const w of [fire, police]) await c.fund(w.address);
    const water = await deploySafe(p.provider, [owner.address], 1);
    safe = new Contract(water, await safeAbi(), p.provider);

    await c.mined(c.registry.registerDepartment(b32("FIRE"), fire.address, 0, await c.keyProof(fire, "FIRE", 0)));
    await c.mined(
      c.registry.registerDepartment(b32("POLICE"), police.address, 1, await c.keyProof(police, "POLICE", 1)),
    );
    const waterKey = TypedDataEncoder.hash(c.domain, DEPARTMENT_KEY_TYPES, {
      code: b32("WATER"),
      wallet: water,
      custody: 1,
    });
    const waterProof = await safeSignature(water, 31337, waterKey, [owner]);
    await c.mined(c.registry.registerDepartment(b32("WATER"), water, 1, waterProof));
    const stages = [stage(["FIRE", "POLICE"], 0), stage(["WATER"], 1, 1)];
    await c.mined(c.registry.registerWorkflow(b32("PERMIT"), id("permit v1"), 0, stages));
  });

  after(async function () {
    await p?.close();
  });

  it("a review by a custodial wallet, a relayed department-held key and a Safe's call is clean, each decision labelled by custody", async function () {
    await review(1, police);
    expect((await c.token.licence(1)).status).to.equal(4n); // APPROVED
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
    const proof = await c.keyProof(taker, "POLICE", 1);
    await c.mined(c.registry.proposeDepartmentWallet(b32("POLICE"), taker.address, 1, proof));
    await p.provider.send("evm_increaseTime", [Number(p.deployment.walletDelay) + 1]);
    await c.mined(c.as(c.registry, operator).activateDepartmentWallet(b32("POLICE")));
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
