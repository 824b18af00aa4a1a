/**
 * Waits for transaction receipts with one shared loop: while anyone waits, it polls the block number and, when it
 * moves, reads the new blocks' transaction hashes and asks for the receipts of the waiting ones among them (and of
 * new waiters once, in case their block came before they did). Every few idle polls, or after a long gap, it asks
 * for every waiting receipt. Many concurrent writes cost one cheap call per poll and one per block, instead of a
 * receipt call per waiting write per block.
 */
import type { JsonRpcProvider, TransactionReceipt } from "ethers";

interface Waiter {
  resolve: (receipt: TransactionReceipt) => void;
  reject: (error: Error) => void;
  deadline: number;
}

/** A gap of more blocks than this since the last poll is not read block by block: every waiter is asked instead. */
const MAX_BLOCKS_READ = 32;

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
  /** Waiting hashes not asked for yet. */
  readonly #fresh = new Set<string>();

  constructor(provider: JsonRpcProvider, pollMs = 10) {
    this.#provider = provider;
    this.#pollMs = pollMs;
  }

  wait(hash: string, timeoutMs: number): Promise<TransactionReceipt> {
    return new Promise((resolve, reject) => {
      const list = this.#waiters.get(hash) ?? [];
      list.push({ resolve, reject, deadline: Date.now() + timeoutMs });
      this.#waiters.set(hash, list);
      this.#fresh.add(hash);
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
        // A chain that went back (restarted from an older snapshot) is followed from where it is now.
        if (block < this.#lastBlock) this.#lastBlock = block;
        if (this.#lastBlock < 0 || block - this.#lastBlock > MAX_BLOCKS_READ || ++idlePolls >= 20) {
          idlePolls = 0;
          this.#fresh.clear();
          this.#lastBlock = block;
          await this.#check([...this.#waiters.keys()]);
        } else if (block !== this.#lastBlock || this.#fresh.size > 0) {
          const candidates = new Set(this.#fresh);
          this.#fresh.clear();
          if (block > this.#lastBlock) {
            const from = this.#lastBlock + 1;
            this.#lastBlock = block;
            for (const hash of await this.#hashesIn(from, block)) if (this.#waiters.has(hash)) candidates.add(hash);
          }
          if (candidates.size > 0) await this.#check([...candidates]);
        }
        this.#expire();
        if (this.#waiters.size > 0) await new Promise((r) => setTimeout(r, this.#pollMs));
      }
    } finally {
      this.#running = false;
    }
  }

  /** Transaction hashes of blocks from..to; on a failure, every waiting hash (the next check asks for them all). */
  async #hashesIn(from: number, to: number): Promise<string[]> {
    try {
      const blocks = await Promise.all(
        Array.from({ length: to - from + 1 }, (_, i) => this.#provider.getBlock(from + i)),
      );
      return blocks.flatMap((b) => (b ? [...b.transactions] : []));
    } catch {
      return [...this.#waiters.keys()];
    }
  }

  async #check(hashes: string[]): Promise<void> {
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
