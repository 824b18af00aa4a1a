/**
 * Waits for transaction receipts with one shared loop: while anyone waits, it polls the block number and, when it
 * moves (or every few polls), asks for the receipts of every waiting hash at once. Many concurrent writes cost one
 * cheap call per poll instead of one receipt poll each.
 */
import type { JsonRpcProvider, TransactionReceipt } from "ethers";

interface Waiter {
  resolve: (receipt: TransactionReceipt) => void;
  reject: (error: Error) => void;
  deadline: number;
}

export class ReceiptTimeoutError extends Error {
  constructor(hash: string) {
    super(`no receipt for ${hash} in time`);
  }
}

export class ReceiptWatcher {
  readonly #provider: JsonRpcProvider;
  readonly #waiters = new Map<string, Waiter[]>();
  readonly #pollMs: number;
  #running = false;
  #lastBlock = -1;

  constructor(provider: JsonRpcProvider, pollMs = 10) {
    this.#provider = provider;
    this.#pollMs = pollMs;
  }

  wait(hash: string, timeoutMs: number): Promise<TransactionReceipt> {
    return new Promise((resolve, reject) => {
      const list = this.#waiters.get(hash) ?? [];
      list.push({ resolve, reject, deadline: Date.now() + timeoutMs });
      this.#waiters.set(hash, list);
      if (!this.#running) void this.#loop();
    });
  }

  async #loop(): Promise<void> {
    this.#running = true;
    let idlePolls = 0;
    try {
      while (this.#waiters.size > 0) {
        let block = this.#lastBlock;
        try {
          block = await this.#provider.getBlockNumber();
        } catch {
          // Node unreachable: keep waiting until deadlines; the outbox reconciles what is left.
        }
        if (block !== this.#lastBlock || ++idlePolls >= 20) {
          idlePolls = 0;
          this.#lastBlock = block;
          await this.#check();
        }
        this.#expire();
        if (this.#waiters.size > 0) await new Promise((r) => setTimeout(r, this.#pollMs));
      }
    } finally {
      this.#running = false;
    }
  }

  async #check(): Promise<void> {
    const hashes = [...this.#waiters.keys()];
    const receipts = await Promise.all(hashes.map((h) => this.#provider.getTransactionReceipt(h).catch(() => null)));
    receipts.forEach((receipt, i) => {
      if (!receipt) return;
      for (const waiter of this.#waiters.get(hashes[i]) ?? []) waiter.resolve(receipt);
      this.#waiters.delete(hashes[i]);
    });
  }

  #expire(): void {
    const now = Date.now();
    for (const [hash, list] of this.#waiters) {
      const remaining = list.filter((w) => {
        if (w.deadline > now) return true;
        w.reject(new ReceiptTimeoutError(hash));
        return false;
      });
      if (remaining.length === 0) this.#waiters.delete(hash);
      else this.#waiters.set(hash, remaining);
    }
  }
}
