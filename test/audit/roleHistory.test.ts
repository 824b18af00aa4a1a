/**
 * The role replay on synthetic RoleGranted / RoleRevoked histories: which grants are the deployment's, who holds
 * what now and at any event, and the findings (department wallets holding roles, merged keys, a DEFAULT_ADMIN_ROLE
 * other than governance, the deployer acting after the hand-over, a changed admin role).
 */
import { expect } from "chai";
import { ZeroHash } from "ethers";
import type { Deployment } from "../../scripts/audit/deploymentFile.ts";
import type { TimedEvent } from "../../scripts/audit/logReader.ts";
import { ROLE_IDS, RoleHistory } from "../../scripts/audit/roleHistory.ts";
import { CONTRACTS, address, deployment, event } from "./syntheticChain.ts";

type Contract = keyof typeof CONTRACTS;
const granted = (block: number, contract: Contract, role: keyof typeof ROLE_IDS, account: string, sender: string) =>
  event("RoleGranted", block, 0, { role: ROLE_IDS[role], account, sender }, { address: CONTRACTS[contract] });
const revoked = (block: number, contract: Contract, role: keyof typeof ROLE_IDS, account: string, sender: string) =>
  event("RoleRevoked", block, 0, { role: ROLE_IDS[role], account, sender }, { address: CONTRACTS[contract] });

/** The grants scripts/deploy.ts makes, the deployer being `deployer`; then the hand-over when governance differs. */
function deploymentGrants(d: Deployment, deployer: string): TimedEvent[] {
  const { roles } = d;
  const events = [
    granted(1, "LicenceToken", "DEFAULT_ADMIN_ROLE", deployer, deployer),
    granted(2, "DocumentRegistry", "DEFAULT_ADMIN_ROLE", deployer, deployer),
    granted(4, "ApprovalRegistry", "DEFAULT_ADMIN_ROLE", deployer, deployer),
    granted(7, "LicenceToken", "OPERATOR_ROLE", roles.operator, deployer),
    granted(8, "DocumentRegistry", "OPERATOR_ROLE", roles.operator, deployer),
    granted(9, "ApprovalRegistry", "OPERATOR_ROLE", roles.operator, deployer),
    granted(10, "LicenceToken", "ADMIN_ROLE", roles.admin, deployer),
    granted(11, "ApprovalRegistry", "ADMIN_ROLE", roles.admin, deployer),
    granted(12, "ApprovalRegistry", "KEEPER_ROLE", roles.keeper, deployer),
  ];
  if (roles.governance !== deployer) {
    let block = 13;
    for (const contract of ["LicenceToken", "DocumentRegistry", "ApprovalRegistry"] as const) {
      events.push(
        granted(block++, contract, "DEFAULT_ADMIN_ROLE", roles.governance, deployer),
        revoked(block++, contract, "DEFAULT_ADMIN_ROLE", deployer, deployer),
      );
    }
  }
  return events;
}

describe("auditor: role holders over time (synthetic events)", function () {
  it("a deployment by governance itself: every grant is the deployment's, the holders are the file's keys, no finding", function () {
    const d = deployment();
    const roles = new RoleHistory(deploymentGrants(d, d.roles.governance), d);
    expect(roles.findings([])).to.deep.equal([]);
    expect(roles.grants().every((g) => g.fromDeployment)).to.equal(true);
    expect(roles.holders().map((h) => `${h.contract} ${h.role} ${h.account}`)).to.have.members([
      `LicenceToken DEFAULT_ADMIN_ROLE ${d.roles.governance}`,
      `DocumentRegistry DEFAULT_ADMIN_ROLE ${d.roles.governance}`,
      `ApprovalRegistry DEFAULT_ADMIN_ROLE ${d.roles.governance}`,
      `LicenceToken OPERATOR_ROLE ${d.roles.operator}`,
      `DocumentRegistry OPERATOR_ROLE ${d.roles.operator}`,
      `ApprovalRegistry OPERATOR_ROLE ${d.roles.operator}`,
      `LicenceToken ADMIN_ROLE ${d.roles.admin}`,
      `ApprovalRegistry ADMIN_ROLE ${d.roles.admin}`,
      `ApprovalRegistry KEEPER_ROLE ${d.roles.keeper}`,
    ]);
  });

  it("a hand-over to a governance multisig: the deployer's DEFAULT_ADMIN_ROLE is allowed while it renounces it", function () {
    const deployer = address();
    const d = deployment({ deployer });
    const roles = new RoleHistory(deploymentGrants(d, deployer), d);
    expect(roles.findings([])).to.deep.equal([]);
    const governors = roles.holders().filter((h) => h.role === "DEFAULT_ADMIN_ROLE");
    expect(governors.map((h) => h.account)).to.deep.equal([d.roles.governance, d.roles.governance, d.roles.governance]);

    // Without the renouncement the deployer still holds it: a finding per contract.
    const kept = deploymentGrants(d, deployer).filter((e) => e.name !== "RoleRevoked");
    const findings = new RoleHistory(kept, d).findings([]);
    expect(findings).to.have.length(3);
    expect(findings[0]).to.include(`the deployer ${deployer} still holds DEFAULT_ADMIN_ROLE on LicenceToken`);
  });

  it("flags DEFAULT_ADMIN_ROLE granted to anyone but governance, even if later revoked", function () {
    const d = deployment();
    const intruder = address();
    const g = d.roles.governance;
    const roles = new RoleHistory(
      [
        ...deploymentGrants(d, g),
        granted(50, "LicenceToken", "DEFAULT_ADMIN_ROLE", intruder, g),
        revoked(51, "LicenceToken", "DEFAULT_ADMIN_ROLE", intruder, g),
      ],
      d,
    );
    const findings = roles.findings([]);
    expect(findings).to.have.length(1);
    expect(findings[0])
      .to.include(`${intruder} was granted DEFAULT_ADMIN_ROLE on LicenceToken at block 50`)
      .and.include(`only governance ${g} may hold it`);
    expect(roles.grants().find((x) => x.account === intruder))
      .to.deep.include({ fromDeployment: false })
      .and.have.nested.property("revoked.blockNumber", 51);
  });

  it("flags the deployer acting with DEFAULT_ADMIN_ROLE after governance received it", function () {
    const deployer = address();
    const d = deployment({ deployer });
    const newOperator = address();
    const events = deploymentGrants(d, deployer);
    // Before renouncing on the approval registry (its last two events), the deployer grants another operator.
    events.splice(events.length - 1, 0, {
      ...granted(17, "ApprovalRegistry", "OPERATOR_ROLE", newOperator, deployer),
      logIndex: 1,
    });
    const findings = new RoleHistory(events, d).findings([]);
    expect(findings).to.have.length(1);
    expect(findings[0]).to.include(
      `the deployer ${deployer} granted OPERATOR_ROLE on ApprovalRegistry to ${newOperator}`,
    );
  });

  it("reports a role granted after the deployment without a finding, and answers holdsAt around a revocation", function () {
    const d = deployment();
    const g = d.roles.governance;
    const newAdmin = address();
    const roles = new RoleHistory(
      [
        ...deploymentGrants(d, g),
        granted(50, "LicenceToken", "ADMIN_ROLE", newAdmin, g),
        revoked(60, "LicenceToken", "ADMIN_ROLE", d.roles.admin, g),
      ],
      d,
    );
    expect(roles.findings([])).to.deep.equal([]);
    const later = roles.grants().filter((x) => !x.fromDeployment);
    expect(later.map((x) => [x.contract, x.role, x.account])).to.deep.equal([["LicenceToken", "ADMIN_ROLE", newAdmin]]);
    const holds = (contract: Contract, account: string, blockNumber: number, logIndex = 0) =>
      roles.holdsAt(contract as "LicenceToken", "ADMIN_ROLE", account, { blockNumber, logIndex });
    expect([
      holds("LicenceToken", d.roles.admin, 59, 5),
      holds("LicenceToken", d.roles.admin, 61),
      holds("LicenceToken", newAdmin, 49),
      holds("ApprovalRegistry", newAdmin, 70),
    ]).to.deep.equal([true, false, false, false]);
  });

  it("flags a role holder that is or was a department wallet, whenever either happened", function () {
    const d = deployment();
    const g = d.roles.governance;
    const keeper2 = address();
    const events = [
      ...deploymentGrants(d, g),
      granted(50, "ApprovalRegistry", "KEEPER_ROLE", keeper2, g),
      revoked(51, "ApprovalRegistry", "KEEPER_ROLE", keeper2, g),
    ];
    const tenure = {
      wallet: keeper2,
      departmentCode: "FIRE",
      since: event("DepartmentRegistered", 90, 0, {}),
      until: null,
    };
    const findings = new RoleHistory(events, d).findings([tenure]);
    expect(findings).to.have.length(1);
    expect(findings[0])
      .to.include(`${keeper2} holds or held KEEPER_ROLE on ApprovalRegistry`)
      .and.include("wallet of department FIRE (from block 90");
  });

  it("flags governance, administration and operation held by one key, on chain or in the deployment file", function () {
    const d = deployment();
    const g = d.roles.governance;
    const merged = new RoleHistory(
      [...deploymentGrants(d, g), granted(50, "DocumentRegistry", "OPERATOR_ROLE", d.roles.admin, g)],
      d,
    ).findings([]);
    expect(merged).to.have.length(1);
    expect(merged[0]).to.include(`${d.roles.admin} holds or held ADMIN_ROLE and OPERATOR_ROLE`);

    const sameKeys = deployment();
    sameKeys.roles.admin = sameKeys.roles.operator;
    const findings = new RoleHistory(deploymentGrants(sameKeys, sameKeys.roles.governance), sameKeys).findings([]);
    expect(
      findings.some((f) => f.includes(`names the same key ${sameKeys.roles.admin} as admin and operator`)),
    ).to.equal(true);
  });

  it("flags a changed admin role", function () {
    const d = deployment();
    const changed = event(
      "RoleAdminChanged",
      50,
      0,
      { role: ROLE_IDS.OPERATOR_ROLE, previousAdminRole: ZeroHash, newAdminRole: ROLE_IDS.ADMIN_ROLE },
      { address: CONTRACTS.LicenceToken },
    );
    const findings = new RoleHistory([...deploymentGrants(d, d.roles.governance), changed], d).findings([]);
    expect(findings).to.deep.equal([
      `the admin role of OPERATOR_ROLE on LicenceToken changed from DEFAULT_ADMIN_ROLE to ADMIN_ROLE at block 50 (${new Date((1_000_000 + 500) * 1000).toISOString()}, tx ${changed.transactionHash})`,
    ]);
  });
});
