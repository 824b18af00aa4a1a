import type { JsonRpcProvider } from "ethers";

/**
 * The chain's head block, asked of the node at most once per `maxAgeMs` however many readers want it (one request
 * in flight): what lets a read computed from contract calls be reused until the chain moves, at the cost of seeing a
 * new block up to `maxAgeMs` late.
 */
export class ChainHead {
  readonly #provider: Pick<JsonRpcProvider, "getBlockNumber">;
  readonly #maxAgeMs: number;
  #askedAt = 0;
  #value?: number;
  #pending?: Promise<number>;

  constructor(provider: Pick<JsonRpcProvider, "getBlockNumber">, maxAgeMs = 250) {
    this.#provider = provider;
    this.#maxAgeMs = maxAgeMs;
  }

  current(): Promise<number> {
    if (this.#value !== undefined && Date.now() - this.#askedAt < this.#maxAgeMs) return Promise.resolve(this.#value);
    this.#pending ??= (async () => {
      const askedAt = Date.now();
      try {
        this.#value = await this.#provider.getBlockNumber();
        this.#askedAt = askedAt;
        return this.#value;
      } finally {
        this.#pending = undefined;
      }
    })();
    return this.#pending;
  }
}
