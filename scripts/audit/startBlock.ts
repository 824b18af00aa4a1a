/**
 * Where the audit starts reading events: each contract's creation block found on chain (binary search over
 * eth_getCode), not the file's `startBlock`, whose being later would hide events (a finding). A node without old
 * state cannot say; then events are read from block 0, which hides nothing, and that is noted.
 */
import type { JsonRpcProvider } from "ethers";
import { ApprovalRegistryAbi, DecisionVerifierAbi, DocumentRegistryAbi, LicenceTokenAbi } from "../../abis/index.ts";
import { CONTRACT_NAMES, type ContractName, type Deployment } from "./deploymentFile.ts";

const ABIS: Record<ContractName, readonly { type: string }[]> = {
  LicenceToken: LicenceTokenAbi,
  DocumentRegistry: DocumentRegistryAbi,
  ApprovalRegistry: ApprovalRegistryAbi,
  DecisionVerifier: DecisionVerifierAbi,
};
/** Only a contract that emits events has events to hide: the decision verifier, stateless, emits none. */
const emitsEvents = (name: string) => ABIS[name as ContractName].some((item) => item.type === "event");

export interface StartBlockAudit {
  deploymentFile: number;
  /** The first block at which each contract had code; null when the node could not say (or it has none). */
  creationBlocks: Record<ContractName, number | null>;
  /** Whether the creation blocks could be derived; if not, events were read from block 0. */
  derived: boolean;
  /** Where the audit read events from: the first creation of a contract that emits events (or the file's
   * startBlock if earlier), or 0 when the creation blocks are unknown. */
  readFrom: number;
}

/** The node has no state at `block` (eth_getCode there failed). */
export class NoHistoryError extends Error {
  readonly block: number;
  constructor(block: number, cause: unknown) {
    const reason = (cause as { error?: { message?: string } }).error?.message ?? (cause as Error).message;
    super(`eth_getCode at block ${block} failed: ${reason}`);
    this.block = block;
  }
}

/** The first block at which `address` has code, given that it has code at `head`. */
export async function creationBlock(provider: JsonRpcProvider, address: string, head: number): Promise<number> {
  let [low, high] = [0, head];
  while (low < high) {
    const middle = Math.floor((low + high) / 2);
    const code = await provider.getCode(address, middle).catch((error: unknown) => {
      throw new NoHistoryError(middle, error);
    });
    if (code === "0x") low = middle + 1;
    else high = middle;
  }
  return low;
}

export async function auditStartBlock(
  provider: JsonRpcProvider,
  deployment: Deployment,
  head: number,
): Promise<{ startBlock: StartBlockAudit; notes: string[] }> {
  const notes: string[] = [];
  const creationBlocks = {} as Record<ContractName, number | null>;
  let derived = true;
  for (const name of CONTRACT_NAMES) {
    const address = deployment.contracts[name];
    creationBlocks[name] = null;
    // No code now is the code audit's finding; there is no creation to find.
    if (!derived || (await provider.getCode(address, head)) === "0x") continue;
    try {
      creationBlocks[name] = await creationBlock(provider, address, head);
    } catch (error) {
      if (!(error instanceof NoHistoryError)) throw error;
      if (derived)
        notes.push(
          `the node keeps no state for old blocks (${error.message}): the contracts' creation blocks could not be derived, so events were read from block 0`,
        );
      derived = false;
    }
  }
  // Never later than the file says either: reading more blocks cannot hide an event, whichever source is wrong.
  const [first] = firstCreations(creationBlocks);
  const readFrom = derived && first ? Math.min(first[1], deployment.startBlock) : 0;
  return { startBlock: { deploymentFile: deployment.startBlock, creationBlocks, derived, readFrom }, notes };
}

/**
 * A startBlock after the first contract's creation (or, when creation blocks are unknown, after the contracts'
 * first event) would hide events.
 */
export function startBlockFindings(
  startBlock: StartBlockAudit,
  firstEvent?: { blockNumber: number; name: string },
): string[] {
  const { deploymentFile: declared } = startBlock;
  const [first] = firstCreations(startBlock.creationBlocks);
  if (startBlock.derived && first && declared > first[1])
    return [
      `the deployment file's startBlock ${declared} is after block ${first[1]}, where ${first[0]} was created: whoever reads events from the file's start misses those of blocks ${first[1]} to ${declared - 1}`,
    ];
  if (!startBlock.derived && firstEvent && declared > firstEvent.blockNumber)
    return [
      `the deployment file's startBlock ${declared} is after block ${firstEvent.blockNumber}, where the contracts emitted ${firstEvent.name}: whoever reads events from the file's start misses those before it`,
    ];
  return [];
}

/** The contracts that emit events with their creation blocks, earliest first. */
const firstCreations = (creationBlocks: Record<string, number | null>) =>
  Object.entries(creationBlocks)
    .filter((entry): entry is [string, number] => entry[1] !== null && emitsEvents(entry[0]))
    .sort((a, b) => a[1] - b[1]);
