import { expect } from "chai";
import { encodeFunctionResult } from "viem";
import { ApprovalRegistryAbi } from "../../abis/index.ts";
import { atBlockOrLatest, type ContractCaller, pendingDepartmentsOf } from "../../api/src/chain/contractReads.ts";

/** A node that keeps the state of the blocks in `kept` only, and records what it was asked. */
function node(kept: (number | string)[]) {
  const asked: (number | string | undefined)[] = [];
  const caller: ContractCaller = {
    async call(_to, _data, blockTag) {
      asked.push(blockTag);
      if (!kept.includes(blockTag ?? "latest")) throw new Error("missing trie node");
      const pending = blockTag === "latest" ? [7] : [3, 4];
      return encodeFunctionResult({ abi: ApprovalRegistryAbi, functionName: "pendingDepartmentsOf", result: pending });
    },
  };
  return { caller, asked };
}

describe("typed reads at a block (api/src/chain/contractReads.ts)", function () {
  const registry = "0x5FbDB2315678afecb367f032d93F642f64180aa3";

  it("reads at the block when the node has its state", async function () {
    const { caller, asked } = node([12, "latest"]);
    expect(await pendingDepartmentsOf(atBlockOrLatest(caller), registry, 1n, 12)).to.deep.equal([3, 4]);
    expect(asked).to.deep.equal([12]);
  });

  it("falls back to the latest state when the node no longer has the block's", async function () {
    const { caller, asked } = node(["latest"]);
    expect(await pendingDepartmentsOf(atBlockOrLatest(caller), registry, 1n, 12)).to.deep.equal([7]);
    expect(asked).to.deep.equal([12, "latest"]);
  });

  it("does not ask twice when the latest state itself fails", async function () {
    const { caller, asked } = node([]);
    let failure: unknown;
    await pendingDepartmentsOf(atBlockOrLatest(caller), registry, 1n, "latest").catch((e) => (failure = e));
    expect((failure as Error).message).to.equal("missing trie node");
    expect(asked).to.deep.equal(["latest"]);
  });
});
