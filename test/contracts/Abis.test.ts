import { readFile } from "node:fs/promises";
import { expect } from "chai";
import { ApprovalRegistryAbi, DocumentRegistryAbi, LicenceTokenAbi } from "../../abis/index.ts";

/** abis/ is generated (npm run abis) and imported by the indexer and the API: it must match what is compiled. */
describe("generated ABIs", function () {
  for (const [name, abi] of [["LicenceToken", LicenceTokenAbi], ["DocumentRegistry", DocumentRegistryAbi], ["ApprovalRegistry", ApprovalRegistryAbi]] as const) {
    it(`abis/${name}.ts matches the compiled ${name} (run npm run abis after changing a contract)`, async function () {
      const artifact = JSON.parse(await readFile(`artifacts/contracts/${name}.sol/${name}.json`, "utf8"));
      expect(JSON.parse(JSON.stringify(abi))).to.deep.equal(artifact.abi);
    });
  }
});
