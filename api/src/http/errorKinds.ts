/**
 * Each kind of error the API raises on purpose, as the answer it gets: AppErrors as they are, chain errors
 * (chain/chainErrors.ts; a contract revert through revertMapping.ts, the one table of contract errors) and
 * storage errors (storage/storageErrors.ts) with their status. Chain and storage code say what happened; this
 * module alone says which HTTP status that is.
 */
import { AppError } from "../domain/errors.ts";
import {
  ChainUnavailableError,
  ContractRevertError,
  NodeRefusedError,
  NotMinedInTimeError,
  SignerError,
  SignerKeyTakenError,
  WalletChoiceError,
} from "../chain/chainErrors.ts";
import { apiErrorOf } from "../domain/revertMapping.ts";
import {
  InvalidFileError,
  InvalidUploadError,
  StorageError,
  StorageKeyExistsError,
  StoredFileNotFoundError,
  UploadNotMultipartError,
  UploadTooLargeError,
} from "../storage/storageErrors.ts";

/** The answer to an error of a known kind, or undefined for anything else (a bug, a parser's error, …). */
export function answerOfKnownError(error: unknown): AppError | undefined {
  if (error instanceof AppError) return error;
  if (error instanceof ContractRevertError) return apiErrorOf(error);
  if (error instanceof ChainUnavailableError) {
    return new AppError(503, "CHAIN_UNAVAILABLE", error.message, undefined, { "Retry-After": "5" });
  }
  if (error instanceof NodeRefusedError) {
    // The node's own words are not shown.
    const message = "The blockchain node refused the transaction; nothing was recorded on chain.";
    return new AppError(502, "CHAIN_REJECTED_TRANSACTION", message);
  }
  if (error instanceof NotMinedInTimeError) {
    const message = "The transaction was recorded and sent but not mined in time; it will be confirmed later.";
    return new AppError(504, "CHAIN_TIMEOUT", message, { transactionHash: error.transactionHash });
  }
  if (error instanceof SignerError) {
    // Unreachable or too slow: nothing was recorded and a retry may succeed. Otherwise the signer's answer is wrong.
    if (error.failure === "unavailable") {
      return new AppError(503, error.code, error.message, error.details, { "Retry-After": "5" });
    }
    return new AppError(502, error.code, error.message, error.details);
  }
  if (error instanceof WalletChoiceError) {
    return new AppError(400, "VALIDATION_ERROR", error.message, { field: "walletAddress" });
  }
  if (error instanceof SignerKeyTakenError) return new AppError(409, error.code, error.message, error.details);
  if (error instanceof StorageError) {
    return new AppError(storageStatus(error), error.code, error.message, error.details);
  }
  return undefined;
}

function storageStatus(error: StorageError): number {
  if (error instanceof UploadTooLargeError) return 413;
  if (error instanceof UploadNotMultipartError) return 415;
  if (error instanceof InvalidUploadError || error instanceof InvalidFileError) return 400;
  if (error instanceof StorageKeyExistsError) return 409;
  if (error instanceof StoredFileNotFoundError) return 404;
  return 500;
}
