/**
 * Synthetic event histories for the auditor's replay functions: events with the fields the ABIs decode, placed at
 * a block, a log index and a block time, so each test writes the chain it needs (including ones the contracts
 * would refuse to produce, which is what the auditor must catch).
 */
import { Wallet, encodeBytes32String, getAddress, recoverAddress, type Result } from "ethers";
import type { Deployment } from "../../scripts/audit/deploymentFile.ts";
import type { TimedEvent } from "../../scripts/audit/logReader.ts";
import type { CallsTo } from "../../scripts/audit/transactionLookups.ts";

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

/** Department wallet events of department 1 (FIRE unless named): custody 0 is CUSTODIAL, 1 DEPARTMENT_HELD. */
export const registered = (block: number, wallet: string, custody = 0n, name = "FIRE", logIndex = 0) =>
  event("DepartmentRegistered", block, logIndex, { departmentId: 1n, code: code(name), wallet, custody });
/** Proposed at block time `time`, announcing effectiveAt = time + `delay`. */
export const proposed = (block: number, wallet: string, time = 1_000_000 + 10 * block, custody = 0n, delay = 60) =>
  event(
    "DepartmentWalletProposed",
    block,
    0,
    { departmentId: 1n, wallet, custody, effectiveAt: BigInt(time + delay) },
    { time },
  );
export const rotated = (
  block: number,
  previousWallet: string,
  wallet: string,
  time?: number,
  custody = 0n,
  logIndex = 0,
) => event("DepartmentWalletRotated", block, logIndex, { departmentId: 1n, previousWallet, wallet, custody }, { time });
export const consented = (block: number, wallet: string, logIndex = 0) =>
  event("DepartmentWalletConsented", block, logIndex, { departmentId: 1n, wallet });

/** The calls of synthetic transactions, as TransactionLookups.callsTo answers them, and ECDSA signature checks. */
export function syntheticCalls() {
  const calls = new Map<string, CallsTo>();
  return {
    calls,
    /** `e`'s transaction made the call `input` from `from`. */
    made<E extends TimedEvent>(e: E, from: string, input: string, how: CallsTo["how"] = "trace"): E {
      calls.set(e.transactionHash, { calls: [{ from, input }], how });
      return e;
    },
    callsTo: async (hash: string) => calls.get(hash) ?? { calls: null, how: "unknown" as const },
    isSignedBy: async (signer: string, digest: string, signature: string) => {
      try {
        return recoverAddress(digest, signature) === getAddress(signer);
      } catch {
        return false;
      }
    },
  };
}
