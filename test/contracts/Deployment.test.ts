import { expect } from "chai";
import LicencePlatform from "../../ignition/modules/LicencePlatform.ts";
import { BUILDING_PERMIT, code, connection, ethers, ROLES, stage, Status } from "./helpers/fixtures.ts";

describe("Ignition module LicencePlatform", function () {
  it("deploys the three contracts wired with every role, and the wiring runs a licence to issuance", async function () {
    const [deployer, operator, admin, keeper, applicant, wallet] = await ethers.getSigners();
    const { token, documents, registry } = await connection.ignition.deploy(LicencePlatform, {
      parameters: { LicencePlatform: { operator: operator.address, admin: admin.address, keeper: keeper.address } },
    });
    const registryAddress = await registry.getAddress();

    expect(await token.hasRole(ROLES.REGISTRY, registryAddress)).to.equal(true);
    expect(await documents.hasRole(ROLES.REGISTRY, registryAddress)).to.equal(true);
    expect(await documents.reviewRegistry()).to.equal(registryAddress);
    for (const c of [token, documents, registry]) {
      expect(await c.hasRole(ROLES.OPERATOR, operator.address)).to.equal(true);
      expect(await c.hasRole(ROLES.DEFAULT_ADMIN, deployer.address)).to.equal(true);
    }
    expect(await token.hasRole(ROLES.ADMIN, admin.address)).to.equal(true);
    expect(await registry.hasRole(ROLES.ADMIN, admin.address)).to.equal(true);
    expect(await registry.hasRole(ROLES.KEEPER, keeper.address)).to.equal(true);
    // Nobody but the registry contract can drive the token's review lifecycle.
    expect(await token.hasRole(ROLES.REGISTRY, operator.address)).to.equal(false);
    expect(await token.hasRole(ROLES.REGISTRY, admin.address)).to.equal(false);

    const asAdmin = registry.connect(admin) as typeof registry;
    const asOperator = (c: typeof token) => c.connect(operator) as typeof c;
    await asAdmin.registerDepartment(code("FIRE"), wallet.address);
    await asAdmin.registerWorkflow(BUILDING_PERMIT, ethers.id("def"), 3600n, [stage({ departments: ["FIRE"] })]);
    await asOperator(token).mint(applicant.address, 7n, BUILDING_PERMIT);
    await asOperator(documents).anchorDocument(7n, ethers.zeroPadValue("0x01", 16), code("PLAN"), ethers.id("plan"));
    await asOperator(registry).submit(7n);
    await (registry.connect(wallet) as typeof registry).approve(7n, 1n, ethers.ZeroHash);
    expect((await token.licence(7n)).status).to.equal(Status.Approved);
  });
});
