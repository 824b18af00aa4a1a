import { expect } from "chai";
import { Interface } from "ethers";
import { ApprovalRegistryAbi, DocumentRegistryAbi } from "../../abis/index.ts";
import {
  anchorOf,
  atBlockOrLatest,
  type ContractCaller,
  pendingDepartmentsOf,
  progressOf,
} from "../../api/src/chain/contractReads.ts";

const registryInterface = new Interface(ApprovalRegistryAbi as never);

/** A node that keeps the state of the blocks in `kept` only, and records what it was asked. */
function node(kept: (number | string)[]) {
  const asked: (number | string | undefined)[] = [];
  const caller: ContractCaller = {
    async call(_to, _data, blockTag) {
      asked.push(blockTag);
      if (!kept.includes(blockTag ?? "latest")) throw new Error("missing trie node");
      const pending = blockTag === "latest" ? [7] : [3, 4];
      return registryInterface.encodeFunctionResult("pendingDepartmentsOf", [pending]);
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

  it("decodes a struct as an object of its fields, integers of 48 bits or fewer as numbers", async function () {
    const progress = [9, 1, 1, 2, 0, 1_800_000_000, 1n << 100n];
    const answer = (data: string): ContractCaller => ({ call: async () => data });
    expect(
      await progressOf(answer(registryInterface.encodeFunctionResult("progressOf", [progress])), registry, 1n),
    ).to.deep.equal({
      workflowId: 9,
      stage: 1,
      phase: 1,
      maxStage: 2,
      flags: 0,
      stageStartedAt: 1_800_000_000,
      ledger: 1n << 100n,
    });
    // Several outputs: a tuple, in order.
    const documents = new Interface(DocumentRegistryAbi as never);
    const anchor = [`0x${"cd".repeat(16)}`, 7, 2, 3, 120, 1_800_000_000];
    const hash = `0x${"ab".repeat(32)}` as const;
    const anchored = answer(documents.encodeFunctionResult("anchorOf", [anchor, true]));
    expect(await anchorOf(anchored, registry, 7n, hash)).to.deep.equal([
      { documentId: anchor[0], tokenId: 7, docIndex: 2, version: 3, blockNumber: 120, timestamp: 1_800_000_000 },
      true,
    ]);
  });
});
