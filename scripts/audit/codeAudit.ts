/**
 * The code at each deployed address, held to the reviewed build byte for byte (CBOR metadata included: it carries
 * the sources' hash), except where deployment writes immutables and library addresses, which are then read for what
 * they hold. So a contract compiled from a changed source is found, whatever its views answer.
 */
import { getAddress, getBytes, hexlify, type JsonRpcProvider } from "ethers";
import type { Deployment } from "./deploymentFile.ts";
import type { ByteRange, ReviewedBuild, ReviewedContract } from "./reviewedBuild.ts";

/** `name`: "<declaring contract>.<name>", as the reviewed build names it; `value`: an address (checksummed), a
 * decimal number, or the 32-byte word in hex. */
type ImmutableValue = { name: string; typeString: string; value: string };

export interface ContractCodeAudit {
  contract: string;
  address: string;
  /** How it was reached: named by the deployment file, or the value of an immutable or a link of another. */
  reachedBy: string;
  codeSize: number;
  /** Null when the reviewed build has no such contract. */
  reviewedSize: number | null;
  /** The runtime code is the reviewed build's, immutables and library addresses aside. */
  matchesReviewedBuild: boolean;
  /** The first byte (from 0) at which the two differ, or null when they do not. */
  firstDifference: number | null;
  immutables: ImmutableValue[];
  libraries: { name: string; address: string }[];
}

const PLACEHOLDER = /__\$[0-9a-fA-F]{34}\$__/g;

/** The reviewed runtime code as bytes, library placeholders as zeros (their bytes are masked anyway). */
export function reviewedCode(contract: ReviewedContract): Uint8Array {
  return getBytes(contract.deployedBytecode.replace(PLACEHOLDER, "0".repeat(40)));
}

/** Where deployment writes into the runtime code: every immutable and every linked library address. */
export function maskedRanges(contract: ReviewedContract): ByteRange[] {
  return [
    ...Object.values(contract.immutableReferences).flatMap((i) => i.ranges),
    ...Object.values(contract.deployedLinkReferences).flatMap((libraries) => Object.values(libraries).flat()),
  ];
}

/** The first byte at which `onChain` and the reviewed code differ once the masked ranges are zeroed, or null. */
export function firstDifference(onChain: Uint8Array, contract: ReviewedContract): number | null {
  const reviewed = reviewedCode(contract);
  const masked = new Uint8Array(Math.max(onChain.length, reviewed.length));
  for (const { start, length } of maskedRanges(contract)) masked.fill(1, start, start + length);
  const common = Math.min(onChain.length, reviewed.length);
  for (let i = 0; i < common; i++) if (!masked[i] && onChain[i] !== reviewed[i]) return i;
  return onChain.length === reviewed.length ? null : common;
}

/** Each immutable's value as the code holds it; `consistent` is false when its places hold different values. */
export function immutableValues(onChain: Uint8Array, contract: ReviewedContract) {
  return Object.entries(contract.immutableReferences).map(([name, { typeString, ranges }]) => {
    const words = wordsAt(onChain, ranges);
    return { name, typeString, value: decodeWord(words[0] ?? "0x", typeString), consistent: new Set(words).size <= 1 };
  });
}

const wordsAt = (code: Uint8Array, ranges: ByteRange[]) =>
  ranges.map(({ start, length }) => hexlify(code.slice(start, start + length)));

const isAddressType = (typeString: string) => typeString === "address" || typeString.startsWith("contract ");

function decodeWord(word: string, typeString: string): string {
  if (word.length !== 66) return word;
  if (isAddressType(typeString)) return getAddress(`0x${word.slice(-40)}`);
  if (/^uint\d*$/.test(typeString)) return BigInt(word).toString();
  return word;
}

/** The address a library link holds in the code (its first place), and whether all its places agree. */
function libraryAddresses(onChain: Uint8Array, contract: ReviewedContract) {
  return Object.values(contract.deployedLinkReferences).flatMap((libraries) =>
    Object.entries(libraries).map(([name, ranges]) => {
      const values = wordsAt(onChain, ranges);
      return { name, address: getAddress(values[0]!), consistent: new Set(values).size === 1 };
    }),
  );
}

/** "ApprovalRegistry._walletDelay" -> "walletDelay". */
const bareName = (immutable: string) => immutable.split(".").pop()!.replace(/^_+/, "");

/** A contract of the build named by an immutable: "ApprovalRegistry.licenceToken" -> "LicenceToken". */
const contractNamed = (immutable: string, build: ReviewedBuild) => {
  const bare = bareName(immutable);
  const name = bare[0]!.toUpperCase() + bare.slice(1);
  return build.contracts[name] ? name : undefined;
};

type Reached = { contract: string; address: string; reachedBy: string };

/** The code of the deployment's contracts, and of every contract their immutables and links point to, at `blockTag`. */
export async function auditCode(
  provider: JsonRpcProvider,
  deployment: Deployment,
  build: ReviewedBuild,
  blockTag: number,
): Promise<{ code: ContractCodeAudit[]; findings: string[] }> {
  const named: Record<string, string> = { ...deployment.contracts, ...deployment.otherContracts };
  const queue: Reached[] = Object.entries(named).map(([contract, address]) => ({
    contract,
    address,
    reachedBy: "deployment file",
  }));
  const code: ContractCodeAudit[] = [];
  const findings: string[] = [];
  for (let next = queue.shift(); next; next = queue.shift()) {
    const { contract, address } = next;
    if (code.some((c) => c.contract === contract && c.address === address)) continue;
    const onChain = getBytes(await provider.getCode(address, blockTag));
    const entry = compared(next, onChain, build.contracts[contract], blockTag, findings);
    code.push(entry);
    // Code that differs keeps its immutables elsewhere: what the reviewed places hold would mean nothing.
    if (entry.matchesReviewedBuild)
      queue.push(...deploymentValues(entry, onChain, build, { ...deployment, named }, findings));
  }
  return { code, findings };
}

/** The code at one address against its reviewed build (findings pushed to `findings`). */
function compared(
  reached: Reached,
  onChain: Uint8Array,
  reviewed: ReviewedContract | undefined,
  blockTag: number,
  findings: string[],
): ContractCodeAudit {
  const where = `${reached.contract} at ${reached.address}`;
  const difference = reviewed && onChain.length ? firstDifference(onChain, reviewed) : null;
  const reviewedSize = reviewed ? reviewedCode(reviewed).length : null;
  if (onChain.length === 0) findings.push(`${where} has no code at block ${blockTag}`);
  else if (!reviewed)
    findings.push(`${where}: the reviewed build has no ${reached.contract}, so its code cannot be checked`);
  else if (difference !== null)
    findings.push(
      `${where} does not run the reviewed build of ${reached.contract}: its runtime code differs from byte ${difference} on (${onChain.length} bytes on chain, ${reviewedSize} reviewed)`,
    );
  return {
    ...reached,
    codeSize: onChain.length,
    reviewedSize,
    matchesReviewedBuild: Boolean(reviewed && onChain.length && difference === null),
    firstDifference: difference,
    immutables: [],
    libraries: [],
  };
}

/**
 * What deployment wrote into reviewed code: the immutables, checked against the deployment, and the libraries'
 * addresses. Recorded in `entry`; returns the contracts they point to that still need their code checked.
 */
function deploymentValues(
  entry: ContractCodeAudit,
  onChain: Uint8Array,
  build: ReviewedBuild,
  deployment: Deployment & { named: Record<string, string> },
  findings: string[],
): Reached[] {
  const { named } = deployment;
  const reviewed = build.contracts[entry.contract]!;
  const where = `${entry.contract} at ${entry.address}`;
  const further: Reached[] = [];
  for (const { consistent, ...immutable } of immutableValues(onChain, reviewed)) {
    entry.immutables.push(immutable);
    if (!consistent)
      findings.push(`${where}: the immutable ${immutable.name} holds different values at its places in the code`);
    const target = isAddressType(immutable.typeString) ? contractNamed(immutable.name, build) : undefined;
    if (target && named[target] && immutable.value !== named[target])
      findings.push(
        `${where}: the immutable ${immutable.name} is ${immutable.value}, not the deployment's ${target} ${named[target]}`,
      );
    else if (target && !named[target])
      further.push({ contract: target, address: immutable.value, reachedBy: immutable.name });
    if (bareName(immutable.name) === "walletDelay" && immutable.value !== String(deployment.walletDelay))
      findings.push(
        `${where}: the immutable ${immutable.name} is ${immutable.value} s but the deployment file says ${deployment.walletDelay} s`,
      );
  }
  for (const { consistent, ...library } of libraryAddresses(onChain, reviewed)) {
    entry.libraries.push(library);
    if (!consistent) findings.push(`${where}: the library ${library.name} is linked at different addresses`);
    further.push({ contract: library.name, address: library.address, reachedBy: `library of ${entry.contract}` });
  }
  return further;
}
