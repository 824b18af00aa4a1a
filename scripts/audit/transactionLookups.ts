/**
 * Block times and transaction senders, each asked of the node once: many events share a block, and every
 * decision needs its transaction's sender.
 */
import { getAddress, type JsonRpcProvider } from "ethers";
import { isoTime } from "./auditRecord.ts";

export class TransactionLookups {
  readonly #provider: JsonRpcProvider;
  readonly #times = new Map<number, Promise<string>>();
  readonly #senders = new Map<string, Promise<string>>();

  constructor(provider: JsonRpcProvider) {
    this.#provider = provider;
  }

  /** The block's time, ISO 8601. */
  timeOf(blockNumber: number): Promise<string> {
    let time = this.#times.get(blockNumber);
    if (!time) {
      time = this.#provider.getBlock(blockNumber).then((block) => {
        if (!block) throw new Error(`the node does not have block ${blockNumber}`);
        return isoTime(block.timestamp);
      });
      this.#times.set(blockNumber, time);
    }
    return time;
  }

  /** The address that signed the transaction. */
  senderOf(transactionHash: string): Promise<string> {
    let sender = this.#senders.get(transactionHash);
    if (!sender) {
      sender = this.#provider.getTransaction(transactionHash).then((tx) => {
        if (!tx) throw new Error(`the node does not have transaction ${transactionHash}`);
        return getAddress(tx.from);
      });
      this.#senders.set(transactionHash, sender);
    }
    return sender;
  }
}
