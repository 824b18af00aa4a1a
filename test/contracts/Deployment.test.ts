import { expect } from "chai";
import LicencePlatform from "../../ignition/modules/LicencePlatform.ts";
import type { ApprovalRegistry } from "../../types/ethers-contracts/index.ts";
import {
  BUILDING_PERMIT,
  code,
  COMMITMENT,
  connection,
  Custody,
  Decision,
  decisionFor,
  ethers,
  keyProof,
  ROLES,
  stage,
  Status,
} from "./helpers/fixtures.ts";

describe("Ignition module LicencePlatform", function () {
  it("deploys the contracts wired once, with every role on its own key, and the wiring runs a licence to issuance", async function () {
    const [deployer, operator, admin, keeper, applicant, wallet] = await ethers.getSigners();
    const { token, documents, verifier, registry } = await connection.ignition.deploy(LicencePlatform, {
      parameters: {
        LicencePlatform: { operator: operator.address, admin: admin.address, keeper: keeper.address, walletDelay: 600 },
      },
    });
    const registryAddress = await registry.getAddress();

    expect(await token.approvalRegistry()).to.equal(registryAddress);
    expect(await documents.reviewRegistry()).to.equal(registryAddress);
    expect(await registry.decisionVerifier()).to.equal(await verifier.getAddress());
    expect(await registry.walletDelay()).to.equal(600n);
    for (const c of [token, documents, registry]) {
      expect(await c.hasRole(ROLES.OPERATOR, operator.address)).to.equal(true);
      expect(await c.hasRole(ROLES.DEFAULT_ADMIN, deployer.address)).to.equal(true);
      expect(await c.hasRole(ROLES.DEFAULT_ADMIN, operator.address)).to.equal(false);
      expect(await c.hasRole(ROLES.DEFAULT_ADMIN, admin.address)).to.equal(false);
    }
    expect(await token.hasRole(ROLES.ADMIN, admin.address)).to.equal(true);
    expect(await registry.hasRole(ROLES.ADMIN, admin.address)).to.equal(true);
    expect(await registry.hasRole(ROLES.ADMIN, operator.address)).to.equal(false);
    expect(await registry.hasRole(ROLES.KEEPER, keeper.address)).to.equal(true);
    // The wiring is fixed: not even governance can point the token or the documents at another registry.
    await expect(token.setApprovalRegistry(deployer.address))
      .to.be.revertedWithCustomError(token, "LicenceApprovalRegistryFixed")
      .withArgs(registryAddress);
    await expect(documents.setReviewRegistry(deployer.address))
      .to.be.revertedWithCustomError(documents, "DocumentReviewRegistryAlreadySet")
      .withArgs(registryAddress);

    // Who decides is governance's (the deployer here): the administration key cannot register a department.
    const asGovernance = registry.connect(deployer) as typeof registry;
    const asOperator = (c: typeof token) => c.connect(operator) as typeof c;
    const proof = await keyProof(
      registry as unknown as ApprovalRegistry,
      wallet,
      code("FIRE"),
      wallet.address,
      Custody.Custodial,
    );
    await expect(
      (registry.connect(admin) as typeof registry).registerDepartment(code("FIRE"), wallet.address, 0, proof),
    )
      .to.be.revertedWithCustomError(registry, "AccessControlUnauthorizedAccount")
      .withArgs(admin.address, ROLES.DEFAULT_ADMIN);
    await asGovernance.registerDepartment(code("FIRE"), wallet.address, Custody.Custodial, proof);
    await asGovernance.registerWorkflow(BUILDING_PERMIT, ethers.id("def"), 3600n, [stage({ departments: ["FIRE"] })]);
    await asOperator(token).mint(applicant.address, 7n, BUILDING_PERMIT, COMMITMENT);
    await asOperator(documents).anchorDocument(7n, ethers.zeroPadValue("0x01", 16), code("PLAN"), ethers.id("plan"));
    await asOperator(registry).submit(7n);
    const decision = await decisionFor(registry as unknown as ApprovalRegistry, 1n, 7n, {
      decision: Decision.Approved,
    });
    await (registry.connect(wallet) as typeof registry).decide(decision);
    expect((await token.licence(7n)).status).to.equal(Status.Approved);
  });
});
