/**
 * Block times, transactions, traces and domains, each asked of the node once: many events share a block. Also the
 * calls a transaction made to a contract, with their callers: a call made inside a Safe's execTransaction is the
 * Safe's, which the transaction's own sender and input do not show.
 */
import { Contract, Interface, ZeroAddress, getAddress, recoverAddress, type JsonRpcProvider } from "ethers";
import { isoTime } from "./auditRecord.ts";
import type { ChainEvent, TimedEvent } from "./logReader.ts";

/** What the auditor needs of a transaction: its sender, its target and its input (selector and arguments). */
export type TransactionFacts = { from: string; to: string | null; data: string };

/** One call a transaction made to a contract (not reverted): who made it and with which input. */
export type ContractCall = { from: string; input: string };

/**
 * The calls a transaction made to a contract, and how the auditor knows them: the node's call trace, or (a node
 * without tracing) the transaction itself when it was sent to the contract, or the inner call of a Safe's
 * execTransaction. `calls` is null when neither can say (a finding: the call cannot be verified).
 */
export interface CallsTo {
  calls: ContractCall[] | null;
  how: "trace" | "transaction" | "safe" | "unknown";
}

/** The EIP-712 domain the registry reports (EIP-5267). */
export type Eip712Domain = {
  fields: number;
  name: string;
  version: string;
  chainId: bigint;
  verifyingContract: string;
  salt: string;
};

const erc1271 = ["function isValidSignature(bytes32 hash, bytes signature) view returns (bytes4)"];
const erc5267 = [
  "function eip712Domain() view returns (bytes1 fields, string name, string version, uint256 chainId, address verifyingContract, bytes32 salt, uint256[] extensions)",
];
const safe = new Interface([
  "function execTransaction(address to, uint256 value, bytes data, uint8 operation, uint256 safeTxGas, uint256 baseGas, uint256 gasPrice, address gasToken, address refundReceiver, bytes signatures) payable returns (bool)",
]);

interface TraceFrame {
  type: string;
  from: string;
  to?: string;
  input: string;
  error?: string;
  calls?: TraceFrame[];
}

/** `ask`, asked once per key: the answer (a promise) is kept. */
function once<K, V>(ask: (key: K) => Promise<V>): (key: K) => Promise<V> {
  const answers = new Map<K, Promise<V>>();
  return (key) => {
    if (!answers.has(key)) answers.set(key, ask(key));
    return answers.get(key)!;
  };
}

export class TransactionLookups {
  readonly #provider: JsonRpcProvider;
  readonly #notes = new Set<string>();

  constructor(provider: JsonRpcProvider) {
    this.#provider = provider;
  }

  /** The block's time, seconds since the epoch. */
  readonly secondsOf = once(async (blockNumber: number) => {
    const block = await this.#provider.getBlock(blockNumber);
    if (!block) throw new Error(`the node does not have block ${blockNumber}`);
    return block.timestamp;
  });

  async timeOf(blockNumber: number): Promise<string> {
    return isoTime(await this.secondsOf(blockNumber));
  }

  async timed(events: ChainEvent[]): Promise<TimedEvent[]> {
    return Promise.all(events.map(async (event) => ({ ...event, time: await this.secondsOf(event.blockNumber) })));
  }

  readonly transactionOf = once(async (transactionHash: string): Promise<TransactionFacts> => {
    const tx = await this.#provider.getTransaction(transactionHash);
    if (!tx) throw new Error(`the node does not have transaction ${transactionHash}`);
    return { from: getAddress(tx.from), to: tx.to ? getAddress(tx.to) : null, data: tx.data };
  });

  /** What the lookups could only answer at the latest block, for the audit's notes. */
  get notes(): string[] {
    return [...this.#notes];
  }

  /**
   * The block to ask about `blockNumber`'s state: itself, or the latest block when the node keeps no state there
   * (pruned, or anvil restarted from its state file), which is noted: a wallet's code or a Safe's owners may have
   * changed since.
   */
  readonly #stateTag = once((blockNumber: number) =>
    this.#provider.getBalance(ZeroAddress, blockNumber).then(
      () => blockNumber,
      () => {
        this.#notes.add(
          "the node keeps no state for some past blocks: wallet code, EIP-1271 signatures and the registry's EIP-712 domain of decisions and key proofs made then were read at the latest block",
        );
        return "latest" as const;
      },
    ),
  );

  /** Whether `address` had code at `blockNumber` (a contract wallet answers EIP-1271; an EOA signs ECDSA). */
  async hasCode(address: string, blockNumber: number): Promise<boolean> {
    return (await this.#provider.getCode(address, await this.#stateTag(blockNumber))) !== "0x";
  }

  /** An EIP-1271 wallet's answer to `isValidSignature(digest, signature)` at `blockNumber` (false if it reverts). */
  async isValidSignature(wallet: string, digest: string, signature: string, blockNumber: number): Promise<boolean> {
    const blockTag = await this.#stateTag(blockNumber);
    const answer = await new Contract(wallet, erc1271, this.#provider)
      .isValidSignature(digest, signature, { blockTag })
      .catch(() => undefined);
    // The magic value is the function's own selector.
    return answer === "0x1626ba7e";
  }

  /** Whether `signature` over `digest` is `signer`'s at `blockNumber`: ECDSA for a key, EIP-1271 for a contract. */
  async isSignedBy(signer: string, digest: string, signature: string, blockNumber: number): Promise<boolean> {
    if (await this.hasCode(signer, blockNumber)) return this.isValidSignature(signer, digest, signature, blockNumber);
    try {
      return recoverAddress(digest, signature) === getAddress(signer);
    } catch {
      return false;
    }
  }

  /**
   * The calls `transactionHash` made to `target` that took effect, in execution order, with their callers. From
   * the node's call trace (debug_traceTransaction, callTracer) when it has one; otherwise the transaction itself
   * if it was sent to `target`, or the inner call of a Safe's execTransaction (a plain CALL) to `target`.
   */
  async callsTo(transactionHash: string, target: string): Promise<CallsTo> {
    const to = getAddress(target);
    const trace = await this.#trace(transactionHash);
    if (trace) {
      const calls: ContractCall[] = [];
      const walk = (frame: TraceFrame) => {
        // A reverted frame's effects (and those of every call under it) are undone: no event came from it.
        if (frame.error) return;
        if (frame.type === "CALL" && frame.to && getAddress(frame.to) === to)
          calls.push({ from: getAddress(frame.from), input: frame.input });
        for (const child of frame.calls ?? []) walk(child);
      };
      walk(trace);
      return { calls, how: "trace" };
    }
    const tx = await this.transactionOf(transactionHash);
    if (tx.to === to) return { calls: [{ from: tx.from, input: tx.data }], how: "transaction" };
    if (tx.to && tx.data.startsWith(safe.getFunction("execTransaction")!.selector)) {
      try {
        const exec = safe.decodeFunctionData("execTransaction", tx.data);
        if (getAddress(exec.to) === to && Number(exec.operation) === 0)
          return { calls: [{ from: tx.to, input: exec.data }], how: "safe" };
      } catch {
        // not a Safe call after all
      }
    }
    return { calls: null, how: "unknown" };
  }

  readonly #trace = once((transactionHash: string): Promise<TraceFrame | null> =>
    this.#provider
      .send("debug_traceTransaction", [transactionHash, { tracer: "callTracer" }])
      .then((frame: TraceFrame) => (frame && typeof frame.type === "string" ? frame : null))
      .catch(() => null),
  );

  /**
   * The registry's EIP-5267 domain at `blockNumber` (null if it has none or the call fails). A node that keeps no
   * state for old blocks is asked at the latest block instead, as for wallet code (#stateTag): every field of the
   * reviewed build's domain is fixed at deployment (constants, chain id, address, an immutable salt), and the code
   * at the address was checked against that build before anything is read.
   */
  eip712Domain(contract: string, blockNumber: number): Promise<Eip712Domain | null> {
    return this.#domain(`${contract}@${blockNumber}`);
  }

  readonly #domain = once(async (key: string): Promise<Eip712Domain | null> => {
    const [contract, blockNumber] = key.split("@");
    const blockTag = await this.#stateTag(Number(blockNumber));
    const d = await new Contract(contract, erc5267, this.#provider).eip712Domain({ blockTag }).catch(() => null);
    if (!d) return null;
    const { name, version, chainId, verifyingContract, salt } = d;
    return { fields: Number(d.fields), name, version, chainId, verifyingContract: getAddress(verifyingContract), salt };
  });
}
