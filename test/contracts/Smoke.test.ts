import { expect } from "chai";
import { deploySubmittedRequest, latestVersions, loadFixture, Phase, Status } from "./helpers/fixtures.ts";

describe("platform smoke", function () {
  it("walks the reference lifecycle to an issued licence", async function () {
    const { token, registry, departments } = await loadFixture(deploySubmittedRequest);
    const remarks = "0x" + "11".repeat(32);
    await registry.connect(departments.A).approve(1n, 0b111, await latestVersions(registry, 1n), remarks);
    await registry.connect(departments.B).approve(1n, 0b111, await latestVersions(registry, 1n), remarks);
    await registry.connect(departments.C).approve(1n, 0b011, await latestVersions(registry, 1n), remarks);
    await registry.connect(departments.D).approve(1n, 0b100, await latestVersions(registry, 1n), remarks);
    expect((await token.licence(1n)).status).to.equal(Status.Approved);
    expect((await registry.progressOf(1n)).phase).to.equal(Phase.Closed);
  });
});
