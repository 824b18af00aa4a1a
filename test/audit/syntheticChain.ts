/**
 * Synthetic event histories for the auditor's replay functions: events with the fields the ABIs decode, placed at
 * a block, a log index and a block time, so each test writes the chain it needs (including ones the contracts
 * would refuse to produce, which is what the auditor must catch).
 */
import { Wallet, encodeBytes32String, type Result } from "ethers";
import type { Deployment } from "../../scripts/audit/deploymentFile.ts";
import type { TimedEvent } from "../../scripts/audit/logReader.ts";

export const address = () => Wallet.createRandom().address;

export const CONTRACTS = {
  LicenceToken: address(),
  DocumentRegistry: address(),
  ApprovalRegistry: address(),
  DecisionVerifier: address(),
};

export function deployment(overrides: Partial<Deployment> = {}): Deployment {
  const governance = address();
  return {
    chainId: 31337,
    startBlock: 1,
    contracts: CONTRACTS,
    roles: { governance, admin: address(), operator: address(), keeper: address() },
    walletDelay: 60,
    deployer: governance,
    ...overrides,
  };
}

let txCounter = 0;

/** An event at `blockNumber` (block time: 1,000,000 + 10 s per block unless `time` is given). */
export function event(
  name: string,
  blockNumber: number,
  logIndex: number,
  args: Record<string, unknown>,
  options: { address?: string; time?: number; transactionHash?: string } = {},
): TimedEvent {
  return {
    name,
    args: args as unknown as Result,
    address: options.address ?? CONTRACTS.ApprovalRegistry,
    transactionHash: options.transactionHash ?? `0x${(++txCounter).toString(16).padStart(64, "0")}`,
    blockNumber,
    logIndex,
    time: options.time ?? 1_000_000 + 10 * blockNumber,
  };
}

export const code = (text: string) => encodeBytes32String(text);
