import { expect } from "chai";
import { toAppError } from "../../api/src/http/errorMiddleware.ts";
import { AbiCoder, id, Interface } from "ethers";
import { ApprovalRegistryAbi } from "../../abis/index.ts";
import {
  ChainUnavailableError,
  ContractRevertError,
  decodeRevert,
  isConnectionError,
  revertDataOf,
} from "../../api/src/chain/chainErrors.ts";
import { apiErrorOf } from "../../api/src/domain/revertMapping.ts";

const registry = new Interface(ApprovalRegistryAbi as never);
const notYourTurn = registry.encodeErrorResult("ReviewNotYourTurn", [12n, 1, 3, 0]);

describe("chainErrors (api/src/chain/chainErrors.ts)", function () {
  describe("decodeRevert", function () {
    it("names a contract's custom error and gives its arguments, JSON-safe in details", function () {
      const error = decodeRevert(notYourTurn)!;
      expect(error).to.be.instanceOf(ContractRevertError);
      expect(error.errorName).to.equal("ReviewNotYourTurn");
      expect(error.args).to.deep.equal([12n, 1n, 3n, 0n]);
      // The error middleware answers it through the one revert table (revertMapping.ts).
      const answer = toAppError(error);
      expect([answer.status, answer.code]).to.deep.equal([409, "NOT_YOUR_TURN"]);
      expect(error.details).to.deep.equal({ error: "ReviewNotYourTurn", args: ["12", "1", "3", "0"] });
    });

    it("returns undefined for no data, a plain revert and an error of no contract of ours", function () {
      expect(decodeRevert(undefined)).to.equal(undefined);
      expect(decodeRevert("0x")).to.equal(undefined);
      expect(decodeRevert("0xdeadbeef")).to.equal(undefined);
      const foreign =
        id("SomethingElse(uint256)").slice(0, 10) + AbiCoder.defaultAbiCoder().encode(["uint256"], [1]).slice(2);
      expect(decodeRevert(foreign)).to.equal(undefined);
    });
  });

  describe("revertDataOf", function () {
    it("finds revert data where ethers and JSON-RPC nodes put it", function () {
      expect(revertDataOf({ data: notYourTurn })).to.equal(notYourTurn);
      expect(revertDataOf({ info: { error: { data: notYourTurn } } })).to.equal(notYourTurn);
      expect(revertDataOf({ error: { data: { data: notYourTurn } } })).to.equal(notYourTurn);
      expect(revertDataOf({ data: "not hex" })).to.equal(undefined);
      expect(revertDataOf(undefined)).to.equal(undefined);
    });
  });

  describe("isConnectionError", function () {
    it("tells an unreachable node from a revert", function () {
      expect(isConnectionError({ code: "ECONNREFUSED" })).to.equal(true);
      expect(isConnectionError({ cause: { code: "UND_ERR_SOCKET" } })).to.equal(true);
      expect(isConnectionError(new Error("fetch failed"))).to.equal(true);
      expect(isConnectionError({ code: "CALL_EXCEPTION", data: notYourTurn, message: "execution reverted" })).to.equal(
        false,
      );
    });

    it("ChainUnavailableError is answered 503 with Retry-After", function () {
      const error = toAppError(new ChainUnavailableError());
      expect([error.status, error.code, error.headers]).to.deep.equal([
        503,
        "CHAIN_UNAVAILABLE",
        { "Retry-After": "5" },
      ]);
    });
  });

  describe("decodeRevert then apiErrorOf (api/src/domain/revertMapping.ts)", function () {
    it("answers a decoded revert with the table's status and code, keeping name and arguments", function () {
      const error = apiErrorOf(decodeRevert(notYourTurn)!);
      expect([error.status, error.code]).to.deep.equal([409, "NOT_YOUR_TURN"]);
      expect(error.details).to.deep.equal({ error: "ReviewNotYourTurn", args: ["12", "1", "3", "0"] });
    });
  });
});
