/**
 * The auditor's tool (`node scripts/audit.ts`, a child process) against the real contracts on a real local chain
 * (anvil, London), with no database and no API: the platform is deployed by scripts/deploy.ts (three keys; the
 * deployer keeps DEFAULT_ADMIN_ROLE as governance, as in the embedded stack), governance registers a custodial
 * department deciding from its wallet and a department-held one whose EIP-712 signature the operator relays
 * (each with its key proof), and a licence is driven to issuance; then
 * - a wallet is rotated the legitimate way (proposal, the delay waited out with evm_increaseTime, activation): clean;
 * - a rotation is forged inside its window: the contracts refuse to activate early, so the test rewrites the
 *   pending change's `effectiveAt` in storage (anvil_setStorageAt) as a faulty or tampered node would, activates
 *   at once and decides from the new wallet; the events then show the rotation and the decision inside the window;
 * - a key that held a role on the token (granted, then revoked) becomes a department's wallet, which the contracts
 *   accept (they check only roles held now) and the auditor flags;
 * - a department whose wallet is a 2-of-3 EIP-1271 contract decides through decideBySig.
 * Needs the contracts compiled (`npx hardhat build`).
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { expect } from "chai";
import {
  AbiCoder,
  ContractFactory,
  TypedDataEncoder,
  Wallet,
  ZeroHash,
  encodeBytes32String as b32,
  id,
  keccak256,
  toBeHex,
  zeroPadValue,
  type InterfaceAbi,
} from "ethers";
import { DECISION_TYPES, DEPARTMENT_KEY_TYPES, ROLES } from "../../abis/index.ts";
import { REPO_ROOT } from "./auditCli.ts";
import { localPlatform, platformContracts, stage, type LocalPlatform } from "./localPlatform.ts";

const DELAY = 60;
const CUSTODIAL = 0;
const DEPARTMENT_HELD = 1;

/** A compiled contract: `name` is its path under contracts/ without `.sol` (e.g. "mocks/OwnersWallet"). */
async function artifact(name: string): Promise<{ abi: InterfaceAbi; bytecode: string }> {
  return JSON.parse(
    await readFile(path.join(REPO_ROOT, "artifacts/contracts", `${name}.sol`, `${path.basename(name)}.json`), "utf8"),
  );
}

describe("auditor's tool against the contracts on a local chain (no database, no API)", function () {
  this.timeout(180_000);
  let p: LocalPlatform;
  let c: Awaited<ReturnType<typeof platformContracts>>;
  const keys = { admin: Wallet.createRandom(), operator: Wallet.createRandom(), keeper: Wallet.createRandom() };
  const fire = Wallet.createRandom(); // custodial: decides by sending its own transactions
  const held = Wallet.createRandom(); // department-held: signs EIP-712, the operator relays
  const issuedToken = 1;

  const rpc = (method: string, params: unknown[]) => p.provider.send(method, params);
  const audit = (...args: string[]) => p.audit(...args);

  async function relayHeldApproval(tokenId: number) {
    const value = await c.decision(tokenId, await c.departmentId("HELD"));
    const signature = await held.signTypedData(c.domain, DECISION_TYPES, value);
    await c.mined(c.as(c.registry, keys.operator).decideBySig(value, signature));
  }

  before(async function () {
    p = await localPlatform(31337, {
      OPERATOR_ADDRESS: keys.operator.address,
      ADMIN_ADDRESS: keys.admin.address,
      KEEPER_ADDRESS: keys.keeper.address,
      WALLET_DELAY_SECONDS: String(DELAY),
    });
    c = await platformContracts(p, await p.provider.getSigner(p.deployment.deployer as string), keys.operator);
    for (const w of [keys.admin, keys.keeper, fire]) await c.fund(w.address);

    // Two departments (custodial FIRE, department-held HELD), one stage both must approve.
    const register = async (code: string, wallet: typeof fire, custody: number) =>
      c.mined(
        c.registry.registerDepartment(b32(code), wallet.address, custody, await c.keyProof(wallet, code, custody)),
      );
    await register("FIRE", fire, CUSTODIAL);
    await register("HELD", held, DEPARTMENT_HELD);
    await c.mined(c.registry.registerWorkflow(b32("AUDIT"), id("definition"), 86_400 * 365, [stage(["FIRE", "HELD"])]));

    await c.submitted(issuedToken, "AUDIT", id("salt-1|applicant-1"));
    await c.mined(c.as(c.registry, fire).decide(await c.decision(issuedToken, await c.departmentId("FIRE"))));
    await relayHeldApproval(issuedToken);
  });

  after(async function () {
    await p?.close();
  });

  it("a sound chain: roles, wiring, both decision routes, the issuance and the applicant commitment check out (exit 0)", async function () {
    const { code, report, stderr } = await audit("--all");
    expect(code, stderr + JSON.stringify(report?.findings)).to.equal(0);
    expect(report.findings).to.deep.equal([]);
    expect(report.wiring).to.deep.include({
      tokenApprovalRegistry: await c.registry.getAddress(),
      decisionVerifier: await c.verifier.getAddress(),
      decisionVerifierHasCode: true,
      walletDelay: DELAY,
    });
    expect(report.wiring.approvalRegistrySet).to.have.length(1);
    expect(report.roles.grants.every((g: any) => g.fromDeployment)).to.equal(true);
    expect(
      report.roles.holders.filter((h: any) => h.role === "ADMIN_ROLE").map((h: any) => [h.contract, h.account]),
    ).to.have.deep.members([
      ["LicenceToken", keys.admin.address],
      ["ApprovalRegistry", keys.admin.address],
    ]);
    expect(report.departments.map((d: any) => [d.code, d.wallet, d.custody])).to.deep.equal([
      ["FIRE", fire.address, "CUSTODIAL"],
      ["HELD", held.address, "DEPARTMENT_HELD"],
    ]);

    const licence = report.licences[0];
    expect(licence).to.deep.include({
      tokenId: issuedToken,
      status: "APPROVED",
      validity: "VALID",
      findings: [],
      applicantCommitment: id("salt-1|applicant-1"),
    });
    expect(
      licence.decisions.map((d: any) => [d.departmentCode, d.route, d.sender, d.signer, d.custody, d.walletMatches]),
    ).to.deep.equal([
      ["FIRE", "SENT", fire.address, fire.address, "CUSTODIAL", true],
      ["HELD", "RELAYED", keys.operator.address, held.address, "DEPARTMENT_HELD", true],
    ]);
    expect(licence.issuanceCheck).to.deep.include({ stagesCompleted: [1], issuedBy: await c.registry.getAddress() });
    // HELD named no document: its approval covers every document of the request, at the latest version.
    expect(licence.issuanceCheck.approvals.map((a: any) => [a.departmentCode, a.covered])).to.deep.equal([
      ["FIRE", [{ docIndex: 0, docType: "SITE_PLAN", version: 1, latestAtIssuance: 1 }]],
      ["HELD", [{ docIndex: 0, docType: "SITE_PLAN", version: 1, latestAtIssuance: 1 }]],
    ]);

    const text = await p.auditText("--token", String(issuedToken));
    expect(text).to.include(`applicant commitment ${id("salt-1|applicant-1")}`);
    expect(text).to.include("platform findings: none");
    expect(text).to.include(`signer ${held.address} DEPARTMENT_HELD relayed by ${keys.operator.address}`);
  });

  it("a rotation that waited out its delay in public is clean, and older decisions keep their wallet of the time", async function () {
    const next = Wallet.createRandom();
    const proof = await c.keyProof(next, "FIRE", CUSTODIAL);
    await c.mined(c.registry.proposeDepartmentWallet(b32("FIRE"), next.address, CUSTODIAL, proof));
    await rpc("evm_increaseTime", [DELAY]);
    await c.mined(c.as(c.registry, keys.operator).activateDepartmentWallet(b32("FIRE")));
    const { code, report } = await audit("--all");
    expect(code, JSON.stringify(report.findings)).to.equal(0);
    const rotation = report.departments[0].changes.at(-1);
    expect(rotation).to.deep.include({
      kind: "ROTATED",
      previousWallet: fire.address,
      wallet: next.address,
      delayRespected: true,
    });
    expect(rotation.waitedSeconds).to.be.at.least(DELAY);
    expect(report.licences[0].decisions[0]).to.deep.include({
      signer: fire.address,
      departmentWallet: fire.address,
      walletMatches: true,
    });
  });

  it("flags a rotation activated inside its window and every decision the early wallet made (exit 1)", async function () {
    const intruder = Wallet.createRandom();
    await c.fund(intruder.address);
    const registry = await c.registry.getAddress();
    const proof = await c.keyProof(intruder, "FIRE", CUSTODIAL);
    const proposal = await (
      await c.registry.proposeDepartmentWallet(b32("FIRE"), intruder.address, CUSTODIAL, proof)
    ).wait();
    // The contract refuses to activate before effectiveAt.
    const activate = () => c.as(c.registry, keys.operator).activateDepartmentWallet(b32("FIRE"));
    expect(await activate().catch(() => "reverted"), "the transaction reverts").to.equal("reverted");
    // Find the pending change's slot (mapping(uint16 => WalletChange), its wallet in the low 160 bits) and move
    // effectiveAt (bits 168..207) to now, as a tampered node would.
    let slot: string | undefined;
    for (let base = 0; base < 32 && !slot; base++) {
      const candidate = keccak256(AbiCoder.defaultAbiCoder().encode(["uint256", "uint256"], [1, base]));
      const word = BigInt(await rpc("eth_getStorageAt", [registry, candidate, "latest"]));
      if ((word & ((1n << 160n) - 1n)) === BigInt(intruder.address)) slot = candidate;
    }
    expect(slot, "the pending wallet change's storage slot").to.be.a("string");
    const word = BigInt(await rpc("eth_getStorageAt", [registry, slot, "latest"]));
    const now = BigInt((await p.provider.getBlock("latest"))!.timestamp);
    const forged = (word & ((1n << 168n) - 1n)) | (now << 168n);
    await rpc("anvil_setStorageAt", [registry, slot, zeroPadValue(toBeHex(forged), 32)]);
    const activation = await (await activate()).wait();

    // The early wallet approves a new request; HELD's approval issues it.
    await c.submitted(2, "AUDIT", ZeroHash);
    const decision = await (
      await c.as(c.registry, intruder).decide(await c.decision(2, await c.departmentId("FIRE")))
    ).wait();
    await relayHeldApproval(2);

    const { code, report } = await audit("--all");
    expect(code).to.equal(1);
    expect(report.ok).to.equal(false);
    const rotationFinding = report.findings.find((f: string) =>
      f.startsWith(`FIRE's wallet became ${intruder.address}`),
    );
    expect(rotationFinding, JSON.stringify(report.findings)).to.match(
      /, \d+ s after its proposal .*: the wallet delay is 60 s$/,
    );
    expect(report.departments[0].changes.at(-1)).to.deep.include({
      kind: "ROTATED",
      wallet: intruder.address,
      delayRespected: false,
    });
    const licence = report.licences.find((l: any) => l.tokenId === 2);
    expect(licence.decisions[0]).to.deep.include({
      signer: intruder.address,
      departmentWallet: intruder.address,
      walletMatches: false,
      transactionHash: decision.hash,
    });
    expect(licence.findings).to.deep.equal([
      `decision APPROVED of FIRE in stage 1 (tx ${decision.hash}) was made by ${intruder.address}, which became FIRE's wallet at block ${activation.blockNumber} without waiting the wallet delay after its proposal (proposed at block ${proposal.blockNumber})`,
    ]);
    // The first licence, decided before, is untouched.
    expect(report.licences.find((l: any) => l.tokenId === 1).findings).to.deep.equal([]);
  });

  it("flags a department wallet that once held a role on the token, which the contracts accept (exit 1)", async function () {
    // The contracts refuse a role to a department wallet and a department wallet holding a role, but only for roles
    // held now: a key that held OPERATOR_ROLE and gave it up can still become a department's wallet.
    const former = Wallet.createRandom();
    const grant = await (await c.token.grantRole(ROLES.OPERATOR_ROLE, former.address)).wait();
    await c.mined(c.token.revokeRole(ROLES.OPERATOR_ROLE, former.address));
    const proof = await c.keyProof(former, "FORMER", CUSTODIAL);
    await c.mined(c.registry.registerDepartment(b32("FORMER"), former.address, CUSTODIAL, proof));
    const { code, report } = await audit("--token", "1");
    expect(code).to.equal(1);
    expect(
      report.roles.grants.filter((g: any) => !g.fromDeployment).map((g: any) => [g.contract, g.role, g.account]),
    ).to.deep.equal([["LicenceToken", "OPERATOR_ROLE", former.address]]);
    expect(
      report.findings.some(
        (f: string) =>
          f.startsWith(
            `${former.address} holds or held OPERATOR_ROLE on LicenceToken (granted at block ${grant.blockNumber}`,
          ) && f.includes("wallet of department FORMER"),
      ),
      JSON.stringify(report.findings),
    ).to.equal(true);
  });

  it("a relayed decision of a contract wallet (EIP-1271, 2 of 3 owners) is checked by asking the wallet itself", async function () {
    const owners = [Wallet.createRandom(), Wallet.createRandom(), Wallet.createRandom()].sort((a, b) =>
      BigInt(a.address) < BigInt(b.address) ? -1 : 1,
    );
    // Two owners sign the digest itself (as a Safe's owners do), in ascending address order.
    const ownersSign = (digest: string) =>
      `0x${owners
        .slice(0, 2)
        .map((o) => o.signingKey.sign(digest).serialized.slice(2))
        .join("")}`;
    const { abi, bytecode } = await artifact("mocks/OwnersWallet");
    const safe = await new ContractFactory(abi, bytecode, c.registry.runner).deploy(
      owners.map((o) => o.address),
      2,
    );
    await safe.waitForDeployment();
    const safeAddress = await safe.getAddress();
    const proof = ownersSign(
      TypedDataEncoder.hash(c.domain, DEPARTMENT_KEY_TYPES, { code: b32("SAFE"), wallet: safeAddress, custody: 1 }),
    );
    await c.mined(c.registry.registerDepartment(b32("SAFE"), safeAddress, DEPARTMENT_HELD, proof));
    await c.mined(c.registry.registerWorkflow(b32("SAFE_TYPE"), id("safe definition"), 0, [stage(["SAFE"])]));
    await c.submitted(3, "SAFE_TYPE", ZeroHash);
    const value = await c.decision(3, await c.departmentId("SAFE"));
    const signature = ownersSign(TypedDataEncoder.hash(c.domain, DECISION_TYPES, value));
    const relayed = await (await c.as(c.registry, keys.operator).decideBySig(value, signature)).wait();

    const { report } = await audit("--token", "3");
    const licence = report.licences[0];
    expect(licence.status).to.equal("APPROVED");
    expect(licence.findings).to.deep.equal([]);
    expect(licence.decisions[0]).to.deep.include({
      route: "RELAYED",
      signer: safeAddress,
      sender: keys.operator.address,
      custody: "DEPARTMENT_HELD",
      walletMatches: true,
      transactionHash: relayed.hash,
    });
  });
});
