/**
 * Block times, transactions and contract code, each asked of the node once: many events share a block, and every
 * decision needs its transaction (who sent it, to what, with which input).
 */
import { Interface, getAddress, type JsonRpcProvider } from "ethers";
import { isoTime } from "./auditRecord.ts";
import type { ChainEvent, TimedEvent } from "./logReader.ts";

/** What the auditor needs of a transaction: its sender, its target and its input (selector and arguments). */
export interface TransactionFacts {
  from: string;
  to: string | null;
  data: string;
}

const erc1271 = new Interface(["function isValidSignature(bytes32 hash, bytes signature) view returns (bytes4)"]);

export class TransactionLookups {
  readonly #provider: JsonRpcProvider;
  readonly #times = new Map<number, Promise<number>>();
  readonly #transactions = new Map<string, Promise<TransactionFacts>>();

  constructor(provider: JsonRpcProvider) {
    this.#provider = provider;
  }

  /** The block's time, seconds since the epoch. */
  secondsOf(blockNumber: number): Promise<number> {
    let time = this.#times.get(blockNumber);
    if (!time) {
      time = this.#provider.getBlock(blockNumber).then((block) => {
        if (!block) throw new Error(`the node does not have block ${blockNumber}`);
        return block.timestamp;
      });
      this.#times.set(blockNumber, time);
    }
    return time;
  }

  /** The block's time, ISO 8601. */
  async timeOf(blockNumber: number): Promise<string> {
    return isoTime(await this.secondsOf(blockNumber));
  }

  /** Events with their blocks' times. */
  async timed(events: ChainEvent[]): Promise<TimedEvent[]> {
    return Promise.all(events.map(async (event) => ({ ...event, time: await this.secondsOf(event.blockNumber) })));
  }

  transactionOf(transactionHash: string): Promise<TransactionFacts> {
    let facts = this.#transactions.get(transactionHash);
    if (!facts) {
      facts = this.#provider.getTransaction(transactionHash).then((tx) => {
        if (!tx) throw new Error(`the node does not have transaction ${transactionHash}`);
        return { from: getAddress(tx.from), to: tx.to ? getAddress(tx.to) : null, data: tx.data };
      });
      this.#transactions.set(transactionHash, facts);
    }
    return facts;
  }

  /** Whether `address` had code at `blockNumber` (a contract wallet answers EIP-1271; an EOA signs ECDSA). */
  async hasCode(address: string, blockNumber: number): Promise<boolean> {
    return (await this.#provider.getCode(address, blockNumber)) !== "0x";
  }

  /** An EIP-1271 wallet's answer to `isValidSignature(digest, signature)` at `blockNumber` (false if it reverts). */
  async isValidSignature(wallet: string, digest: string, signature: string, blockNumber: number): Promise<boolean> {
    try {
      const answer = await this.#provider.call({
        to: wallet,
        data: erc1271.encodeFunctionData("isValidSignature", [digest, signature]),
        blockTag: blockNumber,
      });
      return answer.slice(0, 10).toLowerCase() === erc1271.getFunction("isValidSignature")!.selector;
    } catch {
      return false;
    }
  }
}
