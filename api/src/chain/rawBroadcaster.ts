/**
 * eth_sendRawTransaction, batched: every raw transaction handed over in the same tick of the event loop goes to the
 * node in ONE JSON-RPC batch, in the order handed over (the nonce sequencer hands a wallet's batch over in nonce
 * order). A node takes a batch's items in order; an automining node then often mines them in one block, which is
 * what the indexer's cost per block is shared by.
 *
 * Each item's answer: taken (or "already known": taken earlier), refused outright (NodeRefusedError, with the node's
 * words), or, when the request itself failed, the transport's error (a connection error: the transaction may or may
 * not have arrived, and stays recorded for reconciliation).
 */
import type { JsonRpcApiProvider, JsonRpcError, JsonRpcPayload, JsonRpcResult } from "ethers";
import { NodeRefusedError } from "./chainErrors.ts";

interface Pending {
  raw: string;
  resolve: () => void;
  reject: (error: unknown) => void;
}

export function isAlreadyKnown(message: string): boolean {
  return /already known|already imported|known transaction/i.test(message);
}

export class RawBroadcaster {
  readonly #provider: JsonRpcApiProvider;
  #queue: Pending[] = [];
  #nextId = 1;

  constructor(provider: JsonRpcApiProvider) {
    this.#provider = provider;
  }

  send(raw: string): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.#queue.length === 0) setImmediate(() => void this.#flush());
      this.#queue.push({ raw, resolve, reject });
    });
  }

  async #flush(): Promise<void> {
    const batch = this.#queue;
    this.#queue = [];
    const payloads: JsonRpcPayload[] = batch.map(({ raw }) => ({
      jsonrpc: "2.0",
      id: this.#nextId++,
      method: "eth_sendRawTransaction",
      params: [raw],
    }));
    let answers: (JsonRpcResult | JsonRpcError)[];
    try {
      answers = await this.#provider._send(payloads.length === 1 ? payloads[0] : payloads);
    } catch (error) {
      for (const item of batch) item.reject(error);
      return;
    }
    const byId = new Map(answers.map((answer) => [answer.id, answer]));
    batch.forEach((item, i) => {
      const answer = byId.get(payloads[i].id);
      if (answer && "result" in answer) return item.resolve();
      const message = answer && "error" in answer ? (answer.error.message ?? `error ${answer.error.code}`) : "";
      // No answer for it: whether the node took it is unknown, so it is not a refusal (it stays recorded).
      if (!answer) item.reject(new Error("the node did not answer this transaction of the batch"));
      else if (isAlreadyKnown(message)) item.resolve();
      else item.reject(new NodeRefusedError(message));
    });
  }
}
