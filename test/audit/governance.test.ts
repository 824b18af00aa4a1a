/**
 * Who governs, as the auditor reports it: the rule on made-up holders (a single key, a Safe of threshold 1, a
 * module that is a key, a contract that is not a Safe: findings off the development chain, notes on it), then on
 * a real chain whose id is not the development one (anvil, chain 1337, the platform deployed by scripts/deploy.ts):
 * governance left to the deployer's key is a finding; a real Safe 1.4.1 with threshold 1 and a module that is a
 * key is read (owners, threshold, modules) and flagged, and once its owners raise the threshold to 2 and disable
 * the module the audit is clean. Needs the contracts compiled (`npx hardhat build`).
 */
import { expect } from "chai";
import { Contract, Wallet, getAddress } from "ethers";
import { governanceFindings, type GovernanceAudit } from "../../scripts/audit/governanceAudit.ts";
import { deploySafe, safeAbi } from "../stack/support/safeWallet.ts";
import { fromSafe, localPlatform, type LocalPlatform } from "./localPlatform.ts";

const ALL = ["LicenceToken", "DocumentRegistry", "ApprovalRegistry"] as const;

describe("auditor: who governs (made-up holders)", function () {
  const [a, b, m] = [Wallet.createRandom().address, Wallet.createRandom().address, Wallet.createRandom().address];
  const safe = (threshold: number, modules: { address: string; isKey: boolean }[] = []): GovernanceAudit => ({
    governors: [
      { account: a, contracts: [...ALL], kind: "SAFE", safe: { version: "1.4.1", owners: [a, b], threshold, modules } },
    ],
    ungoverned: [],
  });

  it("a Safe of 2 owners with threshold 2 and no module: nothing to say, on any chain", function () {
    expect(governanceFindings(1337, safe(2))).to.deep.equal({ findings: [], notes: [] });
    expect(governanceFindings(31337, safe(2))).to.deep.equal({ findings: [], notes: [] });
  });

  it("a single key is a finding off the development chain and a note on it", function () {
    const key: GovernanceAudit = {
      governors: [{ account: a, contracts: [...ALL], kind: "KEY", safe: null }],
      ungoverned: [],
    };
    expect(governanceFindings(1337, key)).to.deep.equal({
      findings: [
        `${a} governs LicenceToken, DocumentRegistry, ApprovalRegistry and is a single key (an account without code): one key can grant any role at once; governance must be a multisig (a Safe with threshold 2 or more)`,
      ],
      notes: [],
    });
    expect(governanceFindings(31337, key)).to.deep.equal({
      findings: [],
      notes: [
        `governance is a single development key: everything happens at once (${a} holds DEFAULT_ADMIN_ROLE on LicenceToken, DocumentRegistry, ApprovalRegistry)`,
      ],
    });
  });

  it("a Safe one owner can use alone, a module that is a key, a contract that is not a Safe; a contract nobody governs", function () {
    const audit: GovernanceAudit = {
      governors: [
        ...safe(1, [
          { address: m, isKey: true },
          { address: b, isKey: false },
        ]).governors,
        { account: b, contracts: ["DocumentRegistry"], kind: "CONTRACT", safe: null },
      ],
      ungoverned: ["ApprovalRegistry"],
    };
    const { findings, notes } = governanceFindings(1337, audit);
    expect(findings).to.deep.equal([
      `the Safe ${a} that governs LicenceToken, DocumentRegistry, ApprovalRegistry needs 1 of its 2 owners' signatures: any one owner can act alone`,
      `the Safe ${a} that governs LicenceToken, DocumentRegistry, ApprovalRegistry has the module ${m} enabled, a single key that can act for the Safe without its owners`,
      `${b} governs DocumentRegistry and is a contract but not a Safe (no getOwners/getThreshold): who can act for it cannot be established`,
    ]);
    expect(notes).to.deep.equal([
      "nobody holds DEFAULT_ADMIN_ROLE on ApprovalRegistry: its roles can no longer be granted or revoked",
    ]);
    expect(governanceFindings(31337, audit)).to.deep.equal({ findings: [], notes: [...findings, ...notes] });
  });
});

describe("auditor: who governs, on a chain that is not the development one (anvil 1337, deploy.ts)", function () {
  this.timeout(300_000);
  const keys = { OPERATOR_ADDRESS: Wallet.createRandom().address, ADMIN_ADDRESS: Wallet.createRandom().address };
  let p: LocalPlatform | undefined;

  afterEach(async function () {
    await p?.close();
    p = undefined;
  });

  it("flags governance left to the deployer's key (exit 1)", async function () {
    p = await localPlatform(1337, keys);
    const { code, report } = await p.audit("--all");
    expect(code).to.equal(1);
    const deployer = p.deployment.deployer as string;
    expect(report.governance).to.deep.equal({
      governors: [{ account: deployer, contracts: [...ALL], kind: "KEY", safe: null }],
      ungoverned: [],
    });
    expect(report.findings).to.deep.equal([
      `${deployer} governs LicenceToken, DocumentRegistry, ApprovalRegistry and is a single key (an account without code): one key can grant any role at once; governance must be a multisig (a Safe with threshold 2 or more)`,
    ]);
  });

  it("reads a Safe's owners, threshold and modules: 1 of 2 with a key as module is flagged, 2 of 2 without it is clean", async function () {
    const owners = [Wallet.createRandom(), Wallet.createRandom()];
    const moduleKey = Wallet.createRandom().address;
    let safe!: Contract;
    p = await localPlatform(1337, keys, async (provider) => {
      const address = await deploySafe(
        provider,
        owners.map((o) => o.address),
        1,
      );
      safe = new Contract(address, await safeAbi(), provider);
      await fromSafe(safe, address, safe.interface.encodeFunctionData("enableModule", [moduleKey]), [owners[0]!]);
      return { GOVERNANCE_ADDRESS: address };
    });
    const address = getAddress(await safe.getAddress());

    let { code, report } = await p.audit("--all");
    expect(code).to.equal(1);
    expect(report.governance.governors).to.deep.equal([
      {
        account: address,
        contracts: [...ALL],
        kind: "SAFE",
        safe: {
          version: "1.4.1",
          owners: owners.map((o) => o.address),
          threshold: 1,
          modules: [{ address: moduleKey, isKey: true }],
        },
      },
    ]);
    expect(report.findings).to.deep.equal([
      `the Safe ${address} that governs LicenceToken, DocumentRegistry, ApprovalRegistry needs 1 of its 2 owners' signatures: any one owner can act alone`,
      `the Safe ${address} that governs LicenceToken, DocumentRegistry, ApprovalRegistry has the module ${moduleKey} enabled, a single key that can act for the Safe without its owners`,
    ]);

    const SENTINEL = "0x0000000000000000000000000000000000000001";
    await fromSafe(safe, address, safe.interface.encodeFunctionData("disableModule", [SENTINEL, moduleKey]), [
      owners[0]!,
    ]);
    await fromSafe(safe, address, safe.interface.encodeFunctionData("changeThreshold", [2]), [owners[0]!]);
    ({ code, report } = await p.audit("--all"));
    expect(code, JSON.stringify(report.findings)).to.equal(0);
    expect(report.governance.governors[0].safe).to.deep.include({ threshold: 2, modules: [] });
    expect(report.notes).to.deep.equal([]);
  });
});
