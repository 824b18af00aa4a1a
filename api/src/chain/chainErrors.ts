/**
 * Errors from the chain, told apart by kind: a contract refused the call with one of its custom errors (decoded by
 * name and arguments from the three ABIs), the node is unreachable (nothing was recorded), the node refused a
 * signed transaction, a recorded and sent transaction was not mined in time, a signer would not sign, or a wallet
 * cannot be given as asked. They say what happened and carry no HTTP status: http/errorKinds.ts gives each kind
 * its answer (a revert through revertMapping.ts, the one table of contract errors).
 */
import { Interface } from "ethers";
import { ApprovalRegistryAbi, DocumentRegistryAbi, LicenceTokenAbi } from "../../../abis/index.ts";

const errorsInterface = new Interface(
  [...LicenceTokenAbi, ...DocumentRegistryAbi, ...ApprovalRegistryAbi].filter((item) => item.type === "error") as never,
);

/** A contract reverted with a custom error. `errorName` is the Solidity error name. */
export class ContractRevertError extends Error {
  readonly errorName: string;
  readonly args: unknown[];
  /** The error's name and its arguments as JSON values (bigints as strings): what an API answer shows. */
  readonly details: { error: string; args: unknown[] };

  constructor(errorName: string, args: unknown[], message?: string) {
    super(message ?? `The contract refused the operation: ${errorName}`);
    this.name = "ContractRevertError";
    this.errorName = errorName;
    this.args = args;
    this.details = { error: errorName, args: jsonArgs(args) };
  }
}

/** The node could not be reached: nothing was recorded on chain. */
export class ChainUnavailableError extends Error {
  constructor(cause?: unknown) {
    super("The blockchain is not reachable; nothing was recorded. Try again shortly.");
    this.name = "ChainUnavailableError";
    if (cause) this.cause = cause;
  }
}

/** The node refused a signed transaction when it was broadcast (not a revert): it will not be mined. */
export class NodeRefusedError extends Error {
  constructor(message?: string) {
    super(message);
    this.name = "NodeRefusedError";
  }
}

/** A transaction was recorded and sent, but no receipt came in time: it may still be mined (reconciled later). */
export class NotMinedInTimeError extends Error {
  readonly transactionHash: string;

  constructor(transactionHash: string) {
    super(`The transaction ${transactionHash} was sent but not mined in time`);
    this.name = "NotMinedInTimeError";
    this.transactionHash = transactionHash;
  }
}

export type SignerFailure = "unavailable" | "refused" | "invalid";

const SIGNER_CODES = {
  unavailable: "SIGNER_UNAVAILABLE",
  refused: "SIGNER_REFUSED",
  invalid: "SIGNER_INVALID_RESPONSE",
} as const satisfies Record<SignerFailure, string>;

/**
 * A signer would not sign, so nothing was recorded: it could not be reached or did not answer in time
 * (`unavailable`), it said no or holds no key for the sender (`refused`), or what it answered is not the
 * transaction asked for (`invalid`). `code` is the spec's error code for the failure.
 */
export class SignerError extends Error {
  readonly failure: SignerFailure;
  readonly code: (typeof SIGNER_CODES)[SignerFailure];
  readonly details?: Record<string, unknown>;

  constructor(failure: SignerFailure, message: string, details?: Record<string, unknown>) {
    super(message);
    this.name = new.target.name;
    this.failure = failure;
    this.code = SIGNER_CODES[failure];
    this.details = details;
  }
}

/** The wallet address asked for cannot be used: this signer does not take a chosen address, or does not hold it. */
export class WalletChoiceError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "WalletChoiceError";
  }
}

/** No key can be given: the one asked for is already another wallet here, or the signer has none left. */
export class SignerKeyTakenError extends Error {
  readonly code: "WALLET_IN_USE" | "NO_SIGNER_KEY_AVAILABLE";
  readonly details: Record<string, unknown>;

  constructor(code: SignerKeyTakenError["code"], message: string, details: Record<string, unknown>) {
    super(message);
    this.name = "SignerKeyTakenError";
    this.code = code;
    this.details = details;
  }
}

/** Decodes revert data into a ContractRevertError, or undefined when it is not one of our errors. */
export function decodeRevert(data: string | undefined | null): ContractRevertError | undefined {
  if (!data || data === "0x") return undefined;
  try {
    const parsed = errorsInterface.parseError(data);
    if (!parsed) return undefined;
    return new ContractRevertError(parsed.name, parsed.args.toArray(true));
  } catch {
    return undefined;
  }
}

/** Finds revert data in the shapes ethers and JSON-RPC nodes report it. */
export function revertDataOf(error: unknown): string | undefined {
  const e = error as { data?: unknown; info?: { error?: { data?: unknown } }; error?: { data?: unknown } };
  for (const candidate of [e?.data, e?.info?.error?.data, e?.error?.data]) {
    if (typeof candidate === "string" && candidate.startsWith("0x")) return candidate;
    if (candidate && typeof candidate === "object" && typeof (candidate as { data?: unknown }).data === "string") {
      return (candidate as { data: string }).data;
    }
  }
  return undefined;
}

/** True when the error means the node could not be reached (not that it answered with a revert). */
export function isConnectionError(error: unknown): boolean {
  const e = error as { code?: string; message?: string; cause?: { code?: string } };
  const socket = [
    "ECONNREFUSED",
    "ECONNRESET",
    "ETIMEDOUT",
    "EHOSTUNREACH",
    "UND_ERR_SOCKET",
    "UND_ERR_CONNECT_TIMEOUT",
  ];
  // ethers' own codes for a node it could not reach or that gave no usable answer
  if ([...socket, "TIMEOUT", "NETWORK_ERROR", "SERVER_ERROR"].includes(e?.code ?? "")) return true;
  if (socket.includes(e?.cause?.code ?? "")) return true;
  return /ECONNREFUSED|fetch failed|socket hang up|network error|timeout/i.test(e?.message ?? "");
}

function jsonArgs(args: unknown[]): unknown[] {
  return args.map((a) => (typeof a === "bigint" ? a.toString() : Array.isArray(a) ? jsonArgs(a) : a));
}
