/**
 * abis/build.json, the reviewed build the auditor holds deployed code to, must be the code of the contracts in
 * this repository: exactly what `npm run abis` writes from the compiled artifacts, covering every contract the
 * Ignition module deploys, and reproduced byte for byte by a fresh compile of the repository's sources with solc-js
 * alone (scripts/audit/reproduceBuild.ts), so a reviewer needs neither Hardhat nor anyone's artifacts to check it.
 */
import { readFile } from "node:fs/promises";
import { expect } from "chai";
import LicencePlatform from "../../ignition/modules/LicencePlatform.ts";
import { buildDifferences, compileReviewedBuild, firstDifferentLine } from "../../scripts/audit/reproduceBuild.ts";
import {
  deployedContractNames,
  linkedLibraries,
  readReviewedBuild,
  reviewedBuildFromArtifacts,
  reviewedBuildJson,
  RUNTIME_DEPLOYED_CONTRACTS,
} from "../../scripts/audit/reviewedBuild.ts";

const SHIPPED = "abis/build.json";

describe("the reviewed build (abis/build.json)", function () {
  this.timeout(600_000);

  it("is exactly what npm run abis writes from the compiled artifacts (run npm run abis)", async function () {
    const fromArtifacts = reviewedBuildJson(
      await reviewedBuildFromArtifacts("artifacts", [
        ...deployedContractNames(LicencePlatform),
        ...RUNTIME_DEPLOYED_CONTRACTS,
      ]),
    );
    const shipped = await readFile(SHIPPED, "utf8");
    expect(firstDifferentLine(shipped, fromArtifacts), "first line that differs").to.equal(undefined);
  });

  it("holds every contract the Ignition module or the platform deploys and every library they link", async function () {
    const build = await readReviewedBuild(SHIPPED);
    const names = [...deployedContractNames(LicencePlatform), ...RUNTIME_DEPLOYED_CONTRACTS];
    expect(names).to.include.members(["LicenceToken", "DocumentRegistry", "ApprovalRegistry", "DecisionVerifier"]);
    const libraries = Object.values(build.contracts).flatMap((c) => linkedLibraries(c).map((l) => l.name));
    expect(Object.keys(build.contracts)).to.have.members([...new Set([...names, ...libraries])]);
  });

  it("is reproduced byte for byte by compiling the repository's sources with solc-js, without Hardhat", async function () {
    const shipped = await readReviewedBuild(SHIPPED);
    const fresh = compileReviewedBuild(shipped);
    expect(buildDifferences(shipped, fresh), "what differs").to.deep.equal([]);
    expect(firstDifferentLine(await readFile(SHIPPED, "utf8"), reviewedBuildJson(fresh))).to.equal(undefined);
  });
});
