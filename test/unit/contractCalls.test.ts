import { expect } from "chai";
import { DocumentRegistryAbi } from "../../abis/index.ts";
import { approvalRegistryCall, encodeCall, hexBytes } from "../../api/src/chain/contractCalls.ts";

const WALLET = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";

describe("typed contract calls (api/src/chain/contractCalls.ts)", function () {
  it("checks the function name and the arguments at compile time", function () {
    // Each line below fails `tsc --noEmit` without its @ts-expect-error: that is the point of the module.
    const attempts = [
      // @ts-expect-error no such function
      () => approvalRegistryCall("approveAll", [1n]),
      // @ts-expect-error a view is not a transaction
      () => approvalRegistryCall("progressOf", [1n]),
      // @ts-expect-error tokenId is a uint256 (bigint), not a string
      () => approvalRegistryCall("submit", ["1"]),
      // @ts-expect-error cancel takes a reason code too
      () => approvalRegistryCall("cancel", [1n]),
      // @ts-expect-error suspend is LicenceToken's, not DocumentRegistry's
      () => encodeCall(DocumentRegistryAbi, "suspend", [1n, 1]),
    ];
    expect(attempts).to.have.length(5);
  });

  it("hexBytes passes whole bytes of hex and refuses the rest", function () {
    expect(hexBytes(WALLET)).to.equal(WALLET);
    expect(hexBytes("0x")).to.equal("0x");
    for (const bad of ["0x123", "123456", "0xzz", ""]) expect(() => hexBytes(bad), bad).to.throw("not hex bytes");
  });
});
