import { expect } from "chai";
import { ChainHead } from "../../api/src/chain/chainHead.ts";

describe("chain head (one question to the node however many readers)", () => {
  it("asks once for callers at the same moment and reuses the answer until it is maxAgeMs old", async () => {
    let asked = 0;
    const head = new ChainHead({ getBlockNumber: async () => ++asked }, 50);
    expect(await Promise.all([head.current(), head.current(), head.current()])).to.deep.equal([1, 1, 1]);
    expect(await head.current()).to.equal(1);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(await head.current()).to.equal(2);
    expect(asked).to.equal(2);
  });

  it("asks again after a failed question", async () => {
    let fail = true;
    const head = new ChainHead({ getBlockNumber: async () => (fail ? Promise.reject(new Error("down")) : 7) }, 50);
    await head.current().then(
      () => expect.fail("should fail"),
      (error: Error) => expect(error.message).to.equal("down"),
    );
    fail = false;
    expect(await head.current()).to.equal(7);
  });
});
