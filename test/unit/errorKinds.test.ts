import { expect } from "chai";
import { Interface } from "ethers";
import { ApprovalRegistryAbi } from "../../abis/index.ts";
import {
  ChainUnavailableError,
  ContractRevertError,
  decodeRevert,
  NodeRefusedError,
  NotMinedInTimeError,
  SignerError,
  SignerKeyTakenError,
  WalletChoiceError,
} from "../../api/src/chain/chainErrors.ts";
import { RemoteSignerError } from "../../api/src/chain/remoteSigner.ts";
import { AppError } from "../../api/src/domain/errors.ts";
import { answerOfKnownError } from "../../api/src/http/errorKinds.ts";
import { toAppError } from "../../api/src/http/errorMiddleware.ts";
import {
  InvalidFileError,
  InvalidUploadError,
  StorageKeyExistsError,
  StoredFileNotFoundError,
  UploadNotMultipartError,
  UploadTooLargeError,
} from "../../api/src/storage/storageErrors.ts";

const answer = (error: unknown) => {
  const mapped = toAppError(error);
  return {
    status: mapped.status,
    code: mapped.code,
    message: mapped.message,
    details: mapped.details,
    headers: mapped.headers,
  };
};

/** Chain and storage errors say what happened; api/src/http/errorKinds.ts alone gives them a status. */
describe("error kinds (api/src/http/errorKinds.ts)", function () {
  describe("chain errors", function () {
    it("carry no HTTP status", function () {
      for (const error of [
        new ContractRevertError("X", []),
        new ChainUnavailableError(),
        new NodeRefusedError("no"),
        new NotMinedInTimeError("0xab"),
        new SignerError("refused", "no"),
        new RemoteSignerError("unavailable", "down"),
        new WalletChoiceError("not a key of the signer"),
        new SignerKeyTakenError("WALLET_IN_USE", "taken", {}),
      ]) {
        expect(error).to.not.be.instanceOf(AppError);
        expect(error).to.not.have.property("status");
      }
    });

    it("an unreachable node is 503 CHAIN_UNAVAILABLE with Retry-After: 5", function () {
      expect(answer(new ChainUnavailableError(new Error("ECONNREFUSED")))).to.deep.equal({
        status: 503,
        code: "CHAIN_UNAVAILABLE",
        message: "The blockchain is not reachable; nothing was recorded. Try again shortly.",
        details: undefined,
        headers: { "Retry-After": "5" },
      });
    });

    it("a transaction the node refused is 502 CHAIN_REJECTED_TRANSACTION, without the node's words", function () {
      expect(answer(new NodeRefusedError("nonce too low: internal detail"))).to.deep.equal({
        status: 502,
        code: "CHAIN_REJECTED_TRANSACTION",
        message: "The blockchain node refused the transaction; nothing was recorded on chain.",
        details: undefined,
        headers: undefined,
      });
    });

    it("a transaction not mined in time is 504 CHAIN_TIMEOUT naming its hash", function () {
      expect(answer(new NotMinedInTimeError("0xabc"))).to.deep.include({
        status: 504,
        code: "CHAIN_TIMEOUT",
        details: { transactionHash: "0xabc" },
      });
    });

    it("a revert goes through the revert table: named ones get their code, others 409 CHAIN_REJECTED", function () {
      const errors = new Interface(ApprovalRegistryAbi.filter((item) => item.type === "error") as never);
      const notYourTurn = decodeRevert(errors.encodeErrorResult("ReviewNotYourTurn", [1n, 0, 2, 1]))!;
      expect(answer(notYourTurn)).to.deep.include({ status: 409, code: "NOT_YOUR_TURN" });
      expect(answer(notYourTurn).details).to.deep.equal({ error: "ReviewNotYourTurn", args: ["1", "0", "2", "1"] });
      expect(
        answer(new ContractRevertError("TransactionReverted", [], "The transaction reverted on chain")),
      ).to.deep.include({
        status: 409,
        code: "CHAIN_REJECTED",
        message: "The transaction reverted on chain",
        details: { error: "TransactionReverted", args: [] },
      });
    });
  });

  describe("signer errors (chain/localVaultSigner.ts, chain/remoteSigner.ts)", function () {
    it("a signer that cannot be reached is 503 SIGNER_UNAVAILABLE with Retry-After: 5", function () {
      expect(answer(new RemoteSignerError("unavailable", "The remote signer is not reachable"))).to.deep.equal({
        status: 503,
        code: "SIGNER_UNAVAILABLE",
        message: "The remote signer is not reachable",
        details: undefined,
        headers: { "Retry-After": "5" },
      });
    });

    it("a refusal is 502 SIGNER_REFUSED and a wrong answer 502 SIGNER_INVALID_RESPONSE, with their details", function () {
      expect(answer(new SignerError("refused", "no key for 0xab", { walletAddress: "0xab" }))).to.deep.equal({
        status: 502,
        code: "SIGNER_REFUSED",
        message: "no key for 0xab",
        details: { walletAddress: "0xab" },
        headers: undefined,
      });
      expect(answer(new RemoteSignerError("invalid", "differs", { differing: ["data"] }))).to.deep.equal({
        status: 502,
        code: "SIGNER_INVALID_RESPONSE",
        message: "differs",
        details: { differing: ["data"] },
        headers: undefined,
      });
    });

    it("a wallet address that cannot be chosen is 400 VALIDATION_ERROR on walletAddress; a key taken is 409", function () {
      expect(answer(new WalletChoiceError("walletAddress can be chosen only with SIGNER=remote"))).to.deep.equal({
        status: 400,
        code: "VALIDATION_ERROR",
        message: "walletAddress can be chosen only with SIGNER=remote",
        details: { field: "walletAddress" },
        headers: undefined,
      });
      expect(answer(new SignerKeyTakenError("WALLET_IN_USE", "in use", { walletAddress: "0xab" }))).to.deep.include({
        status: 409,
        code: "WALLET_IN_USE",
        details: { walletAddress: "0xab" },
      });
      expect(
        answer(new SignerKeyTakenError("NO_SIGNER_KEY_AVAILABLE", "none left", { signerKeys: 2 })),
      ).to.deep.include({ status: 409, code: "NO_SIGNER_KEY_AVAILABLE", details: { signerKeys: 2 } });
    });
  });

  describe("storage errors", function () {
    it("carry their spec code but no HTTP status", function () {
      const error = new UploadTooLargeError(1024);
      expect(error).to.not.be.instanceOf(AppError);
      expect(error).to.not.have.property("status");
      expect(error.code).to.equal("PAYLOAD_TOO_LARGE");
    });

    it("map to 413, 415, 400, 409 and 404, with no Connection: close (the parser discards the rest itself)", function () {
      expect(answer(new UploadTooLargeError(10 * 1024 * 1024))).to.deep.equal({
        status: 413,
        code: "PAYLOAD_TOO_LARGE",
        message: "The file is larger than the allowed 10 MB (10485760 bytes)",
        details: { maxBytes: 10485760 },
        headers: undefined,
      });
      expect(answer(new UploadNotMultipartError())).to.deep.include({
        status: 415,
        code: "UNSUPPORTED_MEDIA_TYPE",
        message: "Send the document as multipart/form-data",
      });
      expect(
        answer(new InvalidUploadError("At most 16 parts are accepted", { reason: "TOO_MANY_PARTS" })),
      ).to.deep.equal({
        status: 400,
        code: "VALIDATION_ERROR",
        message: "At most 16 parts are accepted",
        details: { reason: "TOO_MANY_PARTS" },
        headers: undefined,
      });
      expect(answer(new InvalidFileError("The file is empty", { reason: "EMPTY" }))).to.deep.include({
        status: 400,
        code: "INVALID_FILE",
        details: { reason: "EMPTY" },
      });
      expect(answer(new StorageKeyExistsError("documents/a/b/v1.pdf"))).to.deep.include({
        status: 409,
        code: "FILE_EXISTS",
        details: { key: "documents/a/b/v1.pdf" },
      });
      expect(answer(new StoredFileNotFoundError())).to.deep.include({
        status: 404,
        code: "NOT_FOUND",
        message: "File not found",
      });
    });
  });

  it("answers AppErrors as they are and leaves other errors to the middleware", function () {
    const appError = new AppError(418, "TEAPOT", "short and stout");
    expect(answerOfKnownError(appError)).to.equal(appError);
    expect(answerOfKnownError(new Error("boom"))).to.equal(undefined);
    expect(answer(new Error("boom"))).to.deep.include({ status: 500, code: "INTERNAL_ERROR" });
  });
});
