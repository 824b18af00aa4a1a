/**
 * What a contract's custom error means to an API client: one table, keyed by error names typed from the generated
 * ABIs, so a renamed or removed contract error fails to compile here rather than silently falling through to the
 * generic 409 CHAIN_REJECTED. Use cases that give an error another meaning pass an override (listed in
 * docs/decisions.md, "Contract errors in the API"). It holds API answers (statuses), so it is a neutral module
 * beside errors.ts rather than chain code, which says what happened and carries no status.
 */
import { ApprovalRegistryAbi, DocumentRegistryAbi, LicenceTokenAbi } from "../../../abis/index.ts";
import { ContractRevertError } from "../chain/chainErrors.ts";
import { AppError } from "./errors.ts";

type ErrorNameOf<Abi extends readonly { type: string }[]> = Extract<
  Abi[number],
  { type: "error"; name: string }
>["name"];
/** Every custom error the three contracts (and the OpenZeppelin code they inherit) can revert with. */
export type ContractErrorName =
  | ErrorNameOf<typeof LicenceTokenAbi>
  | ErrorNameOf<typeof DocumentRegistryAbi>
  | ErrorNameOf<typeof ApprovalRegistryAbi>;

export interface RevertAnswer {
  status: number;
  code: string;
  message: string;
  /** The revert's arguments name something of another caller's (not what this call named): `details` omits them. */
  hideArgs?: true;
}

/**
 * The API's answer to each contract error a use case expects; the error's name and arguments go in `details`, except
 * for an answer with `hideArgs`.
 */
export const REVERT_ANSWERS = {
  // Reviews (POST /requests/{id}/approve | reject | request-changes)
  ReviewNotRequired: {
    status: 409,
    code: "NOT_PENDING",
    message: "Your department is not required in the request's current stage",
  },
  ReviewNotYourTurn: {
    status: 409,
    code: "NOT_YOUR_TURN",
    message: "This stage is sequential and another department must decide first",
  },
  ReviewAlreadyDecided: {
    status: 409,
    code: "ALREADY_DECIDED",
    message: "Your department has already decided in this stage",
  },
  ReviewWrongPhase: { status: 409, code: "INVALID_STATE", message: "The request is not under review" },
  ReviewStaleDocuments: {
    status: 409,
    code: "STALE_DOCUMENTS",
    message: "A document you reviewed has a newer version: review it again before deciding",
  },
  ReviewInvalidSignature: {
    status: 400,
    code: "INVALID_SIGNATURE",
    message:
      "The signature is not your department wallet's signature of this decision (sign the typed data from POST .../decision-typed-data)",
  },
  ReviewInvalidNonce: {
    status: 409,
    code: "STALE_NONCE",
    message:
      "The signed decision's nonce is not your department's next one (already used, or another decision came first): fetch new typed data and sign again",
  },
  ReviewWrongRound: {
    status: 409,
    code: "STALE_DECISION",
    message:
      "The decision names another stage or round than the request's current one (the review moved on, or the stage restarted): fetch new typed data and decide again",
  },
  ReviewDeadlineTooFar: {
    status: 400,
    code: "VALIDATION_ERROR",
    message: "The decision's deadline is more than a day ahead: sign a decision that expires sooner",
  },
  DepartmentInvalidKeyProof: {
    status: 400,
    code: "INVALID_KEY_PROOF",
    message:
      "keyProof is not the wallet's signature of the DepartmentKey typed data (POST /departments/key-proof-typed-data gives it)",
  },
  DepartmentUnauthorizedConsent: {
    status: 409,
    code: "OWN_TRANSACTION_REQUIRED",
    message: "Only the department's current wallet can consent to its wallet change",
  },
  ReviewSignatureExpired: {
    status: 400,
    code: "SIGNATURE_EXPIRED",
    message: "The signed decision's deadline has passed: fetch new typed data and sign again",
  },
  // Departments
  DepartmentInactive: { status: 409, code: "DEPARTMENT_INACTIVE", message: "Your department is deactivated" },
  DepartmentWalletInUse: {
    status: 409,
    code: "WALLET_NOT_ALLOWED",
    message: "This wallet cannot be a department's: it is another department's or holds a platform role",
  },
  DepartmentWalletHoldsRole: {
    status: 409,
    code: "WALLET_NOT_ALLOWED",
    message: "This wallet cannot be a department's: it is another department's or holds a platform role",
  },
  DepartmentWalletChangeNotDue: {
    status: 409,
    code: "WALLET_CHANGE_NOT_DUE",
    message: "The wallet change is not due yet",
  },
  // Documents
  DocumentAlreadyAnchored: {
    status: 409,
    code: "DUPLICATE_DOCUMENT",
    message: "A document with exactly these bytes is already in this request",
    // Bytes are anchored once per request, so the token is the caller's own; the answer still names no token.
    hideArgs: true,
  },
  DocumentsNotEditable: { status: 409, code: "INVALID_STATE", message: "The request's documents can no longer change" },
  DocumentNotLatestVersion: {
    status: 409,
    code: "CONCURRENT_UPDATE",
    message: "The document was updated at the same time; reload and try again",
  },
  DocumentLimitReached: {
    status: 409,
    code: "DOCUMENT_LIMIT_REACHED",
    message: "A request holds at most 16 documents",
  },
  DocumentUnknownHash: {
    status: 404,
    code: "NOT_FOUND",
    message: "No document with this hash is recorded on the blockchain",
  },
  // Licences
  LicenceInvalidTransition: {
    status: 409,
    code: "INVALID_STATE",
    message: "The licence cannot make this change in its current status",
  },
} as const satisfies Partial<Record<ContractErrorName, RevertAnswer>>;

export type MappedErrorName = keyof typeof REVERT_ANSWERS;
/** A use case's own answer to an error: another table entry, or a function of the revert (for its arguments). */
export type RevertOverrides = Partial<
  Record<ContractErrorName, RevertAnswer | ((error: ContractRevertError) => AppError)>
>;

/** Whether `error` is a revert with one of these names (typed, so a misspelt name does not compile). */
export function isRevert(error: unknown, ...names: ContractErrorName[]): error is ContractRevertError {
  return error instanceof ContractRevertError && (names as string[]).includes(error.errorName);
}

/**
 * The API error for a revert: the use case's override, else the table's answer with the revert's details, else
 * the revert itself (409 CHAIN_REJECTED, naming the contract error).
 */
export function apiErrorOf(error: ContractRevertError, overrides: RevertOverrides = {}): AppError {
  const answer = overrides[error.errorName as ContractErrorName] ?? REVERT_ANSWERS[error.errorName as MappedErrorName];
  if (!answer) return new AppError(409, "CHAIN_REJECTED", error.message, error.details);
  if (typeof answer === "function") return answer(error);
  const details = "hideArgs" in answer && answer.hideArgs ? { error: error.errorName } : error.details;
  return new AppError(answer.status, answer.code, answer.message, details);
}

/** Rethrows a revert as its API error; anything else unchanged. */
export function rethrowAsApiError(error: unknown, overrides: RevertOverrides = {}): never {
  throw error instanceof ContractRevertError ? apiErrorOf(error, overrides) : error;
}
