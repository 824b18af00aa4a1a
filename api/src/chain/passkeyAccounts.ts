/**
 * A department's passkey account (DepartmentPasskeyAccount): its creation code, taken from the reviewed build
 * (abis/build.json, the code the auditor holds every account to, so the platform deploys nothing it was not
 * reviewed for), the calls relayed to it and its views. The gateway sends them like every other transaction.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { AbiCoder } from "ethers";
import { DepartmentPasskeyAccountAbi, type Hex } from "../../../abis/index.ts";
import { encodeCall, hexBytes } from "./contractCalls.ts";
import { readContract, type ContractCaller } from "./contractReads.ts";

const BUILD_FILE = path.resolve(import.meta.dirname, "../../../abis/build.json");

let creationCode: Hex | undefined;

/** The reviewed creation code of DepartmentPasskeyAccount (no libraries to link, no immutables). */
function reviewedCreationCode(): Hex {
  if (!creationCode) {
    const build = JSON.parse(readFileSync(BUILD_FILE, "utf8")) as {
      contracts: Record<string, { bytecode?: string }>;
    };
    const bytecode = build.contracts.DepartmentPasskeyAccount?.bytecode;
    if (!bytecode) throw new Error("abis/build.json has no DepartmentPasskeyAccount creation code (npm run abis)");
    creationCode = hexBytes(bytecode);
  }
  return creationCode;
}

/** The data of the transaction creating an account for `keys` (64 bytes each) needing `threshold` of them. */
export function passkeyAccountCreation(keys: string[], threshold: number): Hex {
  const args = AbiCoder.defaultAbiCoder().encode(["bytes[]", "uint16"], [keys.map(hexBytes), threshold]);
  return `${reviewedCreationCode()}${args.slice(2)}` as Hex;
}

/** IDepartmentPasskeyAccount.ReviewerChange. */
export interface ReviewerChange {
  add: string[];
  remove: string[];
  threshold: number;
  nonce: bigint;
  deadline: bigint;
}

const changeTuple = (change: ReviewerChange) => ({
  add: change.add.map(hexBytes),
  remove: change.remove.map(hexBytes),
  threshold: change.threshold,
  nonce: change.nonce,
  deadline: change.deadline,
});

/** changeReviewers(change, signature): applied only with the reviewers' signature over changeDigest(change). */
export const changeReviewersCall = (change: ReviewerChange, signature: string) =>
  encodeCall(DepartmentPasskeyAccountAbi, "changeReviewers", [changeTuple(change), hexBytes(signature)]);

export const accountReviewers = async (caller: ContractCaller, account: string): Promise<string[]> =>
  [...(await readContract(caller, account, DepartmentPasskeyAccountAbi, "reviewers", []))].map((k) => k.toLowerCase());

export const accountThreshold = async (caller: ContractCaller, account: string): Promise<number> =>
  Number(await readContract(caller, account, DepartmentPasskeyAccountAbi, "threshold", []));

export const accountChangeNonce = async (caller: ContractCaller, account: string): Promise<bigint> =>
  BigInt(await readContract(caller, account, DepartmentPasskeyAccountAbi, "changeNonce", []));

export const accountChangeDigest = (caller: ContractCaller, account: string, change: ReviewerChange) =>
  readContract(caller, account, DepartmentPasskeyAccountAbi, "changeDigest", [changeTuple(change)]);
