import { expect } from "chai";
import { encodeBytes32String, Interface, ZeroHash } from "ethers";
import { ApprovalRegistryAbi, DocumentRegistryAbi, LicenceTokenAbi } from "../../abis/index.ts";
import {
  approvalRegistryCall,
  documentRegistryCall,
  encodeCall,
  hexBytes,
  licenceTokenCall,
} from "../../api/src/chain/contractCalls.ts";

const WALLET = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const HASH = `0x${"ab".repeat(32)}` as const;

/** The typed encoders write the same calldata ethers' untyped Interface wrote for the calls the API sends. */
describe("typed contract calls (api/src/chain/contractCalls.ts)", function () {
  const ethers = {
    approvalRegistry: new Interface(ApprovalRegistryAbi as never),
    licenceToken: new Interface(LicenceTokenAbi as never),
    documentRegistry: new Interface(DocumentRegistryAbi as never),
  };

  it("encodes scalar, bytes32, address and bool arguments as ethers does", function () {
    const code = encodeBytes32String("FIRE");
    const proof = `0x${"ef".repeat(65)}` as const;
    expect(approvalRegistryCall("registerDepartment", [code as `0x${string}`, WALLET, 1, proof])).to.equal(
      ethers.approvalRegistry.encodeFunctionData("registerDepartment", [code, WALLET, 1, proof]),
    );
    expect(approvalRegistryCall("setDepartmentActive", [code as `0x${string}`, false])).to.equal(
      ethers.approvalRegistry.encodeFunctionData("setDepartmentActive", [code, false]),
    );
    expect(approvalRegistryCall("increaseDecisionNonce", [1n << 40n])).to.equal(
      ethers.approvalRegistry.encodeFunctionData("increaseDecisionNonce", [1n << 40n]),
    );
    expect(licenceTokenCall("mint", [WALLET, 42n, code as `0x${string}`, ZeroHash as `0x${string}`])).to.equal(
      ethers.licenceToken.encodeFunctionData("mint", [WALLET, 42n, code, ZeroHash]),
    );
    expect(documentRegistryCall("anchorDocument", [9n, `0x${"01".repeat(16)}`, code as `0x${string}`, HASH])).to.equal(
      ethers.documentRegistry.encodeFunctionData("anchorDocument", [9n, `0x${"01".repeat(16)}`, code, HASH]),
    );
  });

  it("encodes tuples, arrays of tuples and dynamic bytes as ethers does", function () {
    const stage = {
      executionType: 1,
      completion: 2,
      threshold: 2,
      onTimeout: 2,
      onRejection: 1,
      timeoutSeconds: 129_600,
      mandatoryMask: 2,
      departments: [encodeBytes32String("FIRE"), encodeBytes32String("HEALTH")] as `0x${string}`[],
    };
    expect(approvalRegistryCall("registerWorkflow", [HASH, HASH, 86_400n, [stage, stage]])).to.equal(
      ethers.approvalRegistry.encodeFunctionData("registerWorkflow", [HASH, HASH, 86_400n, [stage, stage]]),
    );
    const decision = {
      tokenId: 1n,
      departmentId: 3,
      stage: 1,
      round: 1_800_000_000,
      decision: 1,
      reasonCode: 0,
      reviewedMask: 0b101,
      documents: [HASH, `0x${"12".repeat(32)}`] as `0x${string}`[],
      remarksHash: HASH,
      nonce: 4n,
      deadline: 1_900_000_000n,
    };
    const signature = `0x${"cd".repeat(65)}` as const;
    expect(approvalRegistryCall("decideBySig", [decision, signature])).to.equal(
      ethers.approvalRegistry.encodeFunctionData("decideBySig", [decision, signature]),
    );
    expect(approvalRegistryCall("decide", [decision])).to.equal(
      ethers.approvalRegistry.encodeFunctionData("decide", [decision]),
    );
  });

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

  it("hexBytes passes whole bytes of hex and refuses the rest, as ethers' encoder did", function () {
    expect(hexBytes(WALLET)).to.equal(WALLET);
    expect(hexBytes("0x")).to.equal("0x");
    for (const bad of ["0x123", "123456", "0xzz", ""]) expect(() => hexBytes(bad), bad).to.throw("not hex bytes");
    expect(() => ethers.approvalRegistry.encodeFunctionData("decideBySig", [{}, "0x123"])).to.throw();
  });
});
