import { readdir, readFile } from "node:fs/promises";
import { expect } from "chai";
import { decodeBytes32String, encodeBytes32String, id, ZeroHash } from "ethers";
import {
  ApprovalRegistryAbi,
  bytes16ToUuid,
  bytes32ToString,
  DocumentRegistryAbi,
  LicenceTokenAbi,
  LicenceTokenStatus,
  LicenceTokenStatusNames,
  ROLES,
  roleNameOf,
  stringToBytes32,
  uuidToBytes16,
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

describe("abis/codec.ts", function () {
  it("round-trips a UUID through bytes16, keeping leading zeros", function () {
    const uuid = "00a1b2c3-d4e5-4f60-8a7b-0c9d8e7f6a5b";
    expect(uuidToBytes16(uuid)).to.equal("0x00a1b2c3d4e54f608a7b0c9d8e7f6a5b");
    expect(bytes16ToUuid(uuidToBytes16(uuid))).to.equal(uuid);
    expect(bytes16ToUuid("0x01")).to.equal("00000000-0000-0000-0000-000000000001");
  });

  it("refuses what is not a UUID or a bytes16", function () {
    expect(() => uuidToBytes16("not-a-uuid")).to.throw("not a UUID");
    expect(() => bytes16ToUuid("0xzz")).to.throw("not a bytes16");
  });

  it("encodes bytes32 texts as ethers does, and refuses more than 31 bytes", function () {
    for (const text of ["BUILDING_PERMIT", "", "é-ünïcode"]) {
      expect(stringToBytes32(text)).to.equal(encodeBytes32String(text));
      expect(bytes32ToString(encodeBytes32String(text))).to.equal(decodeBytes32String(encodeBytes32String(text)));
    }
    expect(() => stringToBytes32("x".repeat(32))).to.throw("longer than 31 bytes");
  });
});
