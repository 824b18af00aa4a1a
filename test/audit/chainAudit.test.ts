/**
 * The auditor's tool (`node scripts/audit.ts`, a child process) against the real contracts on a real local chain
 * (anvil, London), with no database and no API: the test deploys the compiled contracts as scripts/deploy.ts
 * wires them (three keys), drives a licence to issuance with one custodial department deciding from its wallet
 * and one department-held department whose EIP-712 signature the operator relays, then
 * - rotates a wallet the legitimate way (proposal, the delay waited out with evm_increaseTime, activation): clean;
 * - forges a rotation inside its window: the contracts refuse to activate early, so the test rewrites the pending
 *   change's `effectiveAt` in storage (anvil_setStorageAt) as a faulty or tampered node would, activates at once
 *   and decides from the new wallet; the events then show the rotation and the decision inside the window;
 * - gives a department wallet a role on the token (which, unlike the approval registry, does not refuse it);
 * - has a department whose wallet is a 2-of-3 EIP-1271 contract decide through decideBySig.
 * Needs the contracts compiled (`npx hardhat build --no-tests`).
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { readFile, rm, writeFile } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { expect } from "chai";
import {
  AbiCoder,
  ContractFactory,
  JsonRpcProvider,
  Wallet,
  ZeroHash,
  encodeBytes32String,
  id,
  keccak256,
  toBeHex,
  zeroPadValue,
  type Contract,
  type HDNodeWallet,
  type InterfaceAbi,
} from "ethers";
import { ROLES } from "../../abis/index.ts";
import { anvilBinary } from "../../scripts/stack/localChain.ts";
import { DECISION_DOMAIN_NAME, DECISION_DOMAIN_VERSION, DECISION_TYPES } from "../../abis/index.ts";
import { REPO_ROOT, runAudit } from "./auditCli.ts";

const run = promisify(execFile);
const DELAY = 60;
const b32 = encodeBytes32String;

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** A compiled contract: `name` is its path under contracts/ without `.sol` (e.g. "mocks/OwnersWallet"). */
async function artifact(name: string): Promise<{ abi: InterfaceAbi; bytecode: string }> {
  return JSON.parse(
    await readFile(path.join(REPO_ROOT, "artifacts/contracts", `${name}.sol`, `${path.basename(name)}.json`), "utf8"),
  );
}

describe("auditor's tool against the contracts on a local chain (no database, no API)", function () {
  this.timeout(120_000);
  let anvil: ChildProcess;
  let provider: JsonRpcProvider;
  let rpcUrl: string;
  let deploymentFile: string;
  // The deployer keeps DEFAULT_ADMIN_ROLE: it is governance, as in the embedded stack.
  const deployer = Wallet.createRandom();
  const keys = { admin: Wallet.createRandom(), operator: Wallet.createRandom(), keeper: Wallet.createRandom() };
  const fire = Wallet.createRandom(); // custodial: decides by sending its own transactions
  const held = Wallet.createRandom(); // department-held: signs EIP-712, the operator relays
  const c: Record<"token" | "documents" | "verifier" | "registry", Contract> = {} as never;
  let issuedToken = 0;

  const rpc = (method: string, params: unknown[]) => provider.send(method, params);
  const as = (contract: Contract, wallet: Wallet | HDNodeWallet) =>
    contract.connect(wallet.connect(provider)) as Contract;
  const governance = (contract: Contract) => as(contract, deployer);
  const mined = async (tx: Promise<{ wait(): Promise<unknown> }>) => (await tx).wait();

  const audit = (...args: string[]) => runAudit(rpcUrl, deploymentFile, ...args);

  /** A submitted request `tokenId` (one document) in the one-stage workflow both departments must approve. */
  async function submitted(tokenId: number, commitment: string) {
    await mined(as(c.token, keys.operator).mint(Wallet.createRandom().address, tokenId, b32("AUDIT"), commitment));
    await mined(
      as(c.documents, keys.operator).anchorDocument(
        tokenId,
        zeroPadValue(toBeHex(tokenId), 16),
        b32("SITE_PLAN"),
        id(`plan ${tokenId}`),
      ),
    );
    await mined(as(c.registry, keys.operator).submit(tokenId));
    return (await c.documents.packedDocumentsOf(tokenId)) as bigint;
  }

  async function relayHeldApproval(tokenId: number, versions: bigint) {
    const record = await c.registry.departmentRecord(2);
    const value = {
      tokenId,
      departmentId: 2,
      decision: 1,
      reasonCode: 0,
      reviewedMask: 0,
      reviewedVersions: versions,
      remarksHash: id("held ok"),
      nonce: record.nonce,
      deadline: 4_000_000_000,
    };
    const domain = {
      name: DECISION_DOMAIN_NAME,
      version: DECISION_DOMAIN_VERSION,
      chainId: 31337,
      verifyingContract: await c.registry.getAddress(),
    };
    await mined(
      as(c.registry, keys.operator).decideBySig(value, await held.signTypedData(domain, DECISION_TYPES, value)),
    );
  }

  before(async function () {
    const port = await freePort();
    rpcUrl = `http://127.0.0.1:${port}`;
    anvil = spawn(
      anvilBinary(),
      ["--host", "127.0.0.1", "--port", String(port), "--chain-id", "31337", "--hardfork", "london", "--silent"],
      { stdio: "ignore" },
    );
    for (let i = 0; ; i++) {
      const answer = await fetch(rpcUrl, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}',
      }).catch(() => undefined);
      if (answer?.ok) break;
      if (i > 150) throw new Error("anvil did not start");
      await new Promise((r) => setTimeout(r, 100));
    }
    provider = new JsonRpcProvider(rpcUrl, undefined, { staticNetwork: true, cacheTimeout: -1 });
    for (const w of [deployer, keys.admin, keys.operator, keys.keeper, fire])
      await rpc("anvil_setBalance", [w.address, "0x3635c9adc5dea00000"]);

    // The deployment, as ignition/modules/LicencePlatform.ts wires it.
    const deploy = async (name: string, args: unknown[]) => {
      const { abi, bytecode } = await artifact(name);
      const contract = await new ContractFactory(abi, bytecode, deployer.connect(provider)).deploy(...args);
      await contract.waitForDeployment();
      return contract as unknown as Contract;
    };
    const startBlock = (await provider.getBlockNumber()) + 1;
    c.token = await deploy("LicenceToken", ["Licence", "LIC", "http://127.0.0.1/verify/", deployer.address]);
    c.documents = await deploy("DocumentRegistry", [await c.token.getAddress(), deployer.address]);
    c.verifier = await deploy("DecisionVerifier", []);
    c.registry = await deploy("ApprovalRegistry", [
      await c.token.getAddress(),
      await c.documents.getAddress(),
      await c.verifier.getAddress(),
      deployer.address,
      DELAY,
    ]);
    await mined(governance(c.token).setApprovalRegistry(await c.registry.getAddress()));
    await mined(governance(c.documents).setReviewRegistry(await c.registry.getAddress()));
    for (const contract of [c.token, c.documents, c.registry])
      await mined(governance(contract).grantRole(ROLES.OPERATOR_ROLE, keys.operator.address));
    for (const contract of [c.token, c.registry])
      await mined(governance(contract).grantRole(ROLES.ADMIN_ROLE, keys.admin.address));
    await mined(governance(c.registry).grantRole(ROLES.KEEPER_ROLE, keys.keeper.address));

    deploymentFile = path.join(os.tmpdir(), `audit-chain-${port}.json`);
    await writeFile(
      deploymentFile,
      JSON.stringify({
        chainId: 31337,
        startBlock,
        contracts: {
          LicenceToken: await c.token.getAddress(),
          DocumentRegistry: await c.documents.getAddress(),
          ApprovalRegistry: await c.registry.getAddress(),
          DecisionVerifier: await c.verifier.getAddress(),
        },
        roles: {
          governance: deployer.address,
          admin: keys.admin.address,
          operator: keys.operator.address,
          keeper: keys.keeper.address,
        },
        walletDelay: DELAY,
        deployer: deployer.address,
      }),
    );

    // Two departments (custodial FIRE, department-held HELD), one stage both must approve.
    const admin = as(c.registry, keys.admin);
    await mined(admin.registerDepartment(b32("FIRE"), fire.address, 0));
    await mined(admin.registerDepartment(b32("HELD"), held.address, 1));
    await mined(
      admin.registerWorkflow(b32("AUDIT"), id("definition"), 86_400 * 365, [
        {
          executionType: 1,
          completion: 0,
          threshold: 0,
          onTimeout: 0,
          onRejection: 0,
          timeoutSeconds: 0,
          mandatoryMask: 0,
          departments: [b32("FIRE"), b32("HELD")],
        },
      ]),
    );

    issuedToken = 1;
    const versions = await submitted(issuedToken, id("salt-1|applicant-1"));
    await mined(as(c.registry, fire).approve(issuedToken, 1, versions, id("fire ok")));
    await relayHeldApproval(issuedToken, versions);
  });

  after(async function () {
    provider?.destroy();
    anvil?.kill("SIGTERM");
    if (deploymentFile) await rm(deploymentFile, { force: true });
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

    const text = await run(
      process.execPath,
      ["scripts/audit.ts", "--rpc", rpcUrl, "--deployment", deploymentFile, "--token", String(issuedToken)],
      { cwd: REPO_ROOT },
    );
    expect(text.stdout).to.include(`applicant commitment ${id("salt-1|applicant-1")}`);
    expect(text.stdout).to.include("platform findings: none");
    expect(text.stdout).to.include(`signer ${held.address} DEPARTMENT_HELD relayed by ${keys.operator.address}`);
  });

  it("a rotation that waited out its delay in public is clean, and older decisions keep their wallet of the time", async function () {
    const next = Wallet.createRandom();
    await mined(as(c.registry, keys.admin).proposeDepartmentWallet(b32("FIRE"), next.address, 0));
    await rpc("evm_increaseTime", [DELAY]);
    await mined(as(c.registry, keys.operator).activateDepartmentWallet(b32("FIRE")));
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
    await rpc("anvil_setBalance", [intruder.address, "0x3635c9adc5dea00000"]);
    const registry = await c.registry.getAddress();
    const proposal = await (
      await as(c.registry, keys.admin).proposeDepartmentWallet(b32("FIRE"), intruder.address, 0)
    ).wait();
    // The contract refuses to activate before effectiveAt.
    await expectRevert(as(c.registry, keys.operator).activateDepartmentWallet(b32("FIRE")));
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
    const now = BigInt((await provider.getBlock("latest"))!.timestamp);
    const forged = (word & ((1n << 168n) - 1n)) | (now << 168n);
    await rpc("anvil_setStorageAt", [registry, slot, zeroPadValue(toBeHex(forged), 32)]);
    const activation = await (await as(c.registry, keys.operator).activateDepartmentWallet(b32("FIRE"))).wait();

    // The early wallet approves a new request; HELD's approval issues it.
    const versions = await submitted(2, ZeroHash);
    const decision = await (await as(c.registry, intruder).approve(2, 1, versions, id("forged"))).wait();
    await relayHeldApproval(2, versions);

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

  it("flags a department wallet given a role on the token, which the token does not refuse", async function () {
    await mined(governance(c.token).grantRole(ROLES.OPERATOR_ROLE, held.address));
    const { code, report } = await audit("--token", "1");
    expect(code).to.equal(1);
    expect(
      report.roles.grants.filter((g: any) => !g.fromDeployment).map((g: any) => [g.contract, g.role, g.account]),
    ).to.deep.equal([["LicenceToken", "OPERATOR_ROLE", held.address]]);
    expect(
      report.findings.some(
        (f: string) =>
          f.startsWith(`${held.address} holds or held OPERATOR_ROLE on LicenceToken`) &&
          f.includes("wallet of department HELD"),
      ),
    ).to.equal(true);
  });

  it("a relayed decision of a contract wallet (EIP-1271, 2 of 3 owners) is checked by asking the wallet itself", async function () {
    const owners = [Wallet.createRandom(), Wallet.createRandom(), Wallet.createRandom()].sort((a, b) =>
      BigInt(a.address) < BigInt(b.address) ? -1 : 1,
    );
    const { abi, bytecode } = await artifact("mocks/OwnersWallet");
    const safe = await new ContractFactory(abi, bytecode, deployer.connect(provider)).deploy(
      owners.map((o) => o.address),
      2,
    );
    await safe.waitForDeployment();
    const safeAddress = await safe.getAddress();
    const admin = as(c.registry, keys.admin);
    await mined(admin.registerDepartment(b32("SAFE"), safeAddress, 1));
    await mined(
      admin.registerWorkflow(b32("SAFE_TYPE"), id("safe definition"), 0, [
        {
          executionType: 1,
          completion: 0,
          threshold: 0,
          onTimeout: 0,
          onRejection: 0,
          timeoutSeconds: 0,
          mandatoryMask: 0,
          departments: [b32("SAFE")],
        },
      ]),
    );
    await mined(as(c.token, keys.operator).mint(Wallet.createRandom().address, 3, b32("SAFE_TYPE"), ZeroHash));
    await mined(
      as(c.documents, keys.operator).anchorDocument(3, zeroPadValue(toBeHex(3), 16), b32("SITE_PLAN"), id("plan 3")),
    );
    await mined(as(c.registry, keys.operator).submit(3));
    const departmentId = Number((await c.registry.departmentByCode(b32("SAFE")))[0]);
    const value = {
      tokenId: 3,
      departmentId,
      decision: 1,
      reasonCode: 0,
      reviewedMask: 0,
      reviewedVersions: await c.documents.packedDocumentsOf(3),
      remarksHash: id("safe ok"),
      nonce: 0,
      deadline: 4_000_000_000,
    };
    const digest = await c.verifier.decisionDigest(value, await c.registry.getAddress());
    // Two owners sign the digest itself (as a Safe's owners do), in ascending address order.
    const signature =
      "0x" +
      owners
        .slice(0, 2)
        .map((o) => o.signingKey.sign(digest).serialized.slice(2))
        .join("");
    const relayed = await (await as(c.registry, keys.operator).decideBySig(value, signature)).wait();

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

async function expectRevert(tx: Promise<unknown>): Promise<void> {
  let reverted = false;
  try {
    await tx;
  } catch {
    reverted = true;
  }
  expect(reverted, "the transaction reverts").to.equal(true);
}
