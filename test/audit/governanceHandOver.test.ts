/**
 * scripts/deploy.ts on a real local chain (anvil), as an operator deploys to a network whose governance is a
 * multisig: with GOVERNANCE_ADDRESS set, the deployer wires the contracts and grants the roles, then gives
 * DEFAULT_ADMIN_ROLE to governance and renounces its own on each contract. The test reads the roles back from the
 * chain, runs the auditor's tool on the result (the hand-over is the deployment's, so no finding), then has the
 * deployer grant a role after the hand-over (governance first giving DEFAULT_ADMIN_ROLE back to it), which the
 * tool must flag. The tool reports who governs: the governance key (a note on the development chain), or a real
 * Safe with its owners and threshold. It also checks that deploy.ts refuses a wallet delay under 24 h outside the
 * development chain.
 * Needs the contracts compiled (`npx hardhat build`).
 */
import { rm } from "node:fs/promises";
import { expect } from "chai";
import { Contract, JsonRpcProvider, Wallet, ZeroHash, getAddress, type InterfaceAbi } from "ethers";
import { ApprovalRegistryAbi, DocumentRegistryAbi, LicenceTokenAbi, ROLES } from "../../abis/index.ts";
import { runAudit } from "./auditCli.ts";
import { deploy, fromSafe, localChain, localPlatform, type LocalPlatform } from "./localPlatform.ts";
import { deploySafe, safeAbi } from "../stack/support/safeWallet.ts";

const ROLE_CONTRACTS = [
  ["LicenceToken", LicenceTokenAbi],
  ["DocumentRegistry", DocumentRegistryAbi],
  ["ApprovalRegistry", ApprovalRegistryAbi],
] as const;

describe("deployment with a governance address: DEFAULT_ADMIN_ROLE handed over on chain, and the auditor's role checks", function () {
  this.timeout(180_000);
  let p: LocalPlatform;
  let deployer: string;
  const governance = Wallet.createRandom();
  const keys = { admin: Wallet.createRandom().address, operator: Wallet.createRandom().address };
  const env = { OPERATOR_ADDRESS: keys.operator, ADMIN_ADDRESS: keys.admin, WALLET_DELAY_SECONDS: "60" };
  const contract = (name: string, abi: InterfaceAbi) =>
    new Contract((p.deployment.contracts as Record<string, string>)[name], abi, p.provider);
  // The reviewed build shipped in abis/build.json, as an auditor runs the tool (no --build).
  const audit = () => runAudit(p.chain.rpcUrl, p.deploymentFile, "--all");

  before(async function () {
    p = await localPlatform(31337, { ...env, GOVERNANCE_ADDRESS: governance.address });
    deployer = getAddress((await p.provider.send("eth_accounts", []))[0]);
  });

  after(async function () {
    await p?.close();
  });

  it("governance holds DEFAULT_ADMIN_ROLE on each contract and the deployer no role at all; the file names both", async function () {
    expect(p.deployment.roles).to.deep.include({ governance: governance.address, admin: keys.admin });
    expect(p.deployment.deployer).to.equal(deployer);
    for (const [name, abi] of ROLE_CONTRACTS) {
      const c = contract(name, abi);
      expect(await c.hasRole(ZeroHash, governance.address), `governance on ${name}`).to.equal(true);
      for (const role of [ZeroHash, ROLES.ADMIN_ROLE, ROLES.OPERATOR_ROLE])
        expect(await c.hasRole(role, deployer), `deployer's ${role} on ${name}`).to.equal(false);
      expect(await c.hasRole(ROLES.OPERATOR_ROLE, keys.operator), `operator on ${name}`).to.equal(true);
    }
  });

  it("the auditor accepts the hand-over: governance's grants and the deployer's renunciation are the deployment's (exit 0)", async function () {
    const { code, report, stderr } = await audit();
    expect(code, stderr + JSON.stringify(report?.findings)).to.equal(0);
    expect(report.findings).to.deep.equal([]);
    // A key governs: on the development chain that is said, not flagged.
    expect(report.governance).to.deep.equal({
      governors: [{ account: governance.address, contracts: ROLE_CONTRACTS.map(([n]) => n), kind: "KEY", safe: null }],
      ungoverned: [],
    });
    expect(report.notes).to.deep.equal([
      `governance is a single development key: everything happens at once (${governance.address} holds DEFAULT_ADMIN_ROLE on LicenceToken, DocumentRegistry, ApprovalRegistry)`,
    ]);
    const defaultAdmin = report.roles.grants.filter((g: any) => g.role === "DEFAULT_ADMIN_ROLE");
    expect(defaultAdmin).to.have.length(6);
    for (const name of ROLE_CONTRACTS.map(([n]) => n)) {
      const [byConstructor, toGovernance] = defaultAdmin.filter((g: any) => g.contract === name);
      expect(byConstructor).to.deep.include({ account: deployer, fromDeployment: true });
      expect(byConstructor.revoked.by, `${name}: renounced by the deployer itself`).to.equal(deployer);
      expect(toGovernance).to.deep.include({
        account: governance.address,
        grantedBy: deployer,
        fromDeployment: true,
        revoked: null,
      });
    }
    expect(
      report.roles.holders.filter((h: any) => h.role === "DEFAULT_ADMIN_ROLE").map((h: any) => h.account),
    ).to.deep.equal([governance.address, governance.address, governance.address]);
  });

  it("flags the deployer granting a role after governance received DEFAULT_ADMIN_ROLE (exit 1)", async function () {
    // Governance gives the deployer DEFAULT_ADMIN_ROLE back on the token, and the deployer grants OPERATOR_ROLE.
    await p.provider.send("anvil_setBalance", [governance.address, "0x3635c9adc5dea00000"]);
    const token = contract("LicenceToken", LicenceTokenAbi);
    await (await (token.connect(governance.connect(p.provider)) as Contract).grantRole(ZeroHash, deployer)).wait();
    const newcomer = Wallet.createRandom().address;
    const grant = await (
      await (token.connect(await p.provider.getSigner(deployer)) as Contract).grantRole(ROLES.OPERATOR_ROLE, newcomer)
    ).wait();

    const { code, report } = await audit();
    expect(code).to.equal(1);
    const findings: string[] = report.findings;
    expect(
      findings.some((f) =>
        f.startsWith(
          `the deployer ${deployer} granted OPERATOR_ROLE on LicenceToken to ${newcomer} at block ${grant!.blockNumber} `,
        ),
      ),
      JSON.stringify(findings),
    ).to.equal(true);
    expect(
      findings.some(
        (f) =>
          f.startsWith(`${deployer} was granted DEFAULT_ADMIN_ROLE on LicenceToken at `) &&
          f.endsWith(`by ${governance.address}: only governance ${governance.address} may hold it`),
      ),
      JSON.stringify(findings),
    ).to.equal(true);
  });

  it("deploy.ts refuses a wallet delay under 24 h on a chain other than the development chain", async function () {
    const other = await localChain(1337);
    try {
      const refused = await deploy(other.chain.rpcUrl, other.dir, {
        ...env,
        GOVERNANCE_ADDRESS: governance.address,
        WALLET_DELAY_SECONDS: "86399",
      }).then(
        () => undefined,
        (error: { stderr: string }) => error,
      );
      expect(refused, "deploy.ts fails").to.not.equal(undefined);
      expect(refused!.stderr).to.include("WALLET_DELAY_SECONDS is 86399 s, under 86400 s (24 h) on chain 1337");
      const chainProvider = new JsonRpcProvider(other.chain.rpcUrl, undefined, { staticNetwork: true });
      expect(await chainProvider.getBlockNumber(), "nothing deployed").to.equal(0);
      chainProvider.destroy();
    } finally {
      await other.chain.kill();
      await rm(other.dir, { recursive: true, force: true });
    }
  });

  describe("governance a real Safe (2 of 2 owners)", function () {
    let safePlatform: LocalPlatform;
    let safe: Contract;
    const owners = [Wallet.createRandom(), Wallet.createRandom()];

    before(async function () {
      safePlatform = await localPlatform(31337, env, async (provider) => {
        const address = await deploySafe(
          provider,
          owners.map((o) => o.address),
          2,
        );
        safe = new Contract(address, await safeAbi(), provider);
        return { GOVERNANCE_ADDRESS: address };
      });
    });

    after(async function () {
      await safePlatform?.close();
    });

    it("the auditor accepts the deployment and names the Safe as governance, with its owners and threshold (exit 0)", async function () {
      const { code, report, stderr } = await runAudit(safePlatform.chain.rpcUrl, safePlatform.deploymentFile, "--all");
      expect(code, stderr + JSON.stringify(report?.findings)).to.equal(0);
      const address = getAddress(await safe.getAddress());
      expect(
        report.roles.holders.filter((h: any) => h.role === "DEFAULT_ADMIN_ROLE").map((h: any) => h.account),
      ).to.deep.equal(Array(3).fill(address));
      expect(report.governance.governors).to.deep.equal([
        {
          account: address,
          contracts: ROLE_CONTRACTS.map(([n]) => n),
          kind: "SAFE",
          safe: { version: "1.4.1", owners: owners.map((o) => o.address), threshold: 2, modules: [] },
        },
      ]);
      expect(report.notes).to.deep.equal([]);
    });

    it("holds DEFAULT_ADMIN_ROLE on each contract, and uses it only with both owners' signatures", async function () {
      const safeAddress = await safe.getAddress();
      const { contracts } = safePlatform.deployment;
      const token = new Contract(contracts.LicenceToken, LicenceTokenAbi, safePlatform.provider);
      for (const [name, abi] of ROLE_CONTRACTS) {
        const c = new Contract(contracts[name], abi, safePlatform.provider);
        expect(await c.hasRole(ZeroHash, safeAddress), `the Safe governs ${name}`).to.equal(true);
      }
      const newAdmin = Wallet.createRandom().address;
      const grant = token.interface.encodeFunctionData("grantRole", [ROLES.ADMIN_ROLE, newAdmin]);

      // One owner alone: the Safe refuses (GS020: signatures data too short for its threshold), nothing changes.
      const alone = await fromSafe(safe, await token.getAddress(), grant, [owners[0]!]).then(
        () => undefined,
        (error: Error) => error,
      );
      expect(alone, "one owner cannot act for the Safe").to.not.equal(undefined);
      expect(await token.hasRole(ROLES.ADMIN_ROLE, newAdmin)).to.equal(false);

      await fromSafe(safe, await token.getAddress(), grant, owners);
      expect(await token.hasRole(ROLES.ADMIN_ROLE, newAdmin), "granted by the Safe").to.equal(true);
    });
  });
});
