import { readdir, readFile } from "node:fs/promises";
import { expect } from "chai";
import { id, ZeroHash } from "ethers";
import {
  ApprovalRegistryAbi,
  DocumentRegistryAbi,
  LicenceTokenAbi,
  LicenceTokenStatus,
  LicenceTokenStatusNames,
  ROLES,
  roleNameOf,
} from "../../abis/index.ts";
import { contractKnowledge } from "../../scripts/abis/contractKnowledge.ts";

/** abis/ is generated (npm run abis) and imported by the indexer, the API and the auditor: it must match what is compiled. */
describe("generated ABIs", function () {
  for (const [name, abi] of [
    ["LicenceToken", LicenceTokenAbi],
    ["DocumentRegistry", DocumentRegistryAbi],
    ["ApprovalRegistry", ApprovalRegistryAbi],
  ] as const) {
    it(`abis/${name}.ts matches the compiled ${name} (run npm run abis after changing a contract)`, async function () {
      const artifact = JSON.parse(await readFile(`artifacts/contracts/${name}.sol/${name}.json`, "utf8"));
      expect(JSON.parse(JSON.stringify(abi))).to.deep.equal(artifact.abi);
    });
  }

  it("every file in abis/ is exactly what scripts/exportAbis.ts writes from the artifacts (run npm run abis)", async function () {
    const expected = await contractKnowledge();
    const present = (await readdir("abis")).filter((name) => name.endsWith(".ts")).sort();
    expect(present).to.deep.equal([...expected.keys()].sort());
    for (const [name, content] of expected)
      expect(await readFile(`abis/${name}`, "utf8"), `abis/${name}`).to.equal(content);
  });
});

describe("abis/enums.ts", function () {
  it("numbers each member by declaration order and spells names as the API does", function () {
    expect(LicenceTokenStatus.PendingResubmission).to.equal(3);
    expect(LicenceTokenStatusNames[LicenceTokenStatus.PendingResubmission]).to.equal("PENDING_RESUBMISSION");
  });
});

describe("abis/roles.ts", function () {
  it("holds keccak256 of each role name and the zero DEFAULT_ADMIN_ROLE", function () {
    expect(ROLES).to.deep.equal({
      DEFAULT_ADMIN_ROLE: ZeroHash,
      ADMIN_ROLE: id("ADMIN_ROLE"),
      OPERATOR_ROLE: id("OPERATOR_ROLE"),
      KEEPER_ROLE: id("KEEPER_ROLE"),
    });
    expect(roleNameOf(id("KEEPER_ROLE").toUpperCase().replace("0X", "0x"))).to.equal("KEEPER_ROLE");
    expect(roleNameOf(id("OTHER"))).to.equal(undefined);
  });
});
