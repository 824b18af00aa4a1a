/**
 * Waits for transaction receipts with one shared loop. It wakes when a block comes (the node's newHeads
 * subscription, `blockHeads.ts`) or, without one, every `pollMs`; then it reads the new blocks' transaction hashes
 * and asks for the receipts of the waiting ones among them (and of new waiters once, at once, in case their block
 * came before they did). Now and then, or after a long gap, it asks for every waiting receipt. Many concurrent
 * writes cost one call per block, instead of a receipt call per waiting write per block.
 */
import type { JsonRpcProvider, TransactionReceipt } from "ethers";
import type { BlockHeads } from "./blockHeads.ts";

interface Waiter {
  resolve: (receipt: TransactionReceipt) => void;
  reject: (error: Error) => void;
  deadline: number;
}

/** A gap of more blocks than this since the last poll is not read block by block: every waiter is asked instead. */
const MAX_BLOCKS_READ = 32;
/** With a subscription, how long the loop sleeps without a block before it checks on its own (missed heads). */
const QUIET_MS = 1_000;
/** Every waiting receipt is asked for at least this often (a missed block, a reorg). */
const FULL_CHECK_MS = 1_000;

export class ReceiptTimeoutError extends Error {
  constructor(hash: string) {
    super(`no receipt for ${hash} in time`);
  }
}

export class ReceiptWatcher {
  readonly #provider: JsonRpcProvider;
  readonly #waiters = new Map<string, Waiter[]>();
  readonly #pollMs: number;
  readonly #heads?: BlockHeads;
  #running = false;
  #lastBlock = -1;
  /** The newest block announced by the subscription and not yet handled by the loop. */
  #announced = -1;
  /** Wakes the loop early: a block was announced or a waiter came. */
  #wake?: () => void;
  /** Waiting hashes not asked for yet. */
  readonly #fresh = new Set<string>();

  constructor(provider: JsonRpcProvider, heads?: BlockHeads, pollMs = 10) {
    this.#provider = provider;
    this.#pollMs = pollMs;
    this.#heads = heads;
    heads?.onHead((blockNumber) => {
      this.#announced = Math.max(this.#announced, blockNumber);
      this.#wake?.();
    });
  }

  wait(hash: string, timeoutMs: number): Promise<TransactionReceipt> {
    return new Promise((resolve, reject) => {
      const list = this.#waiters.get(hash) ?? [];
      list.push({ resolve, reject, deadline: Date.now() + timeoutMs });
      this.#waiters.set(hash, list);
      this.#fresh.add(hash);
      if (!this.#running) void this.#loop();
      else this.#wake?.();
    });
  }

  /** The chain's head: the announced one when the subscription is live, otherwise asked for. */
  async #head(): Promise<number> {
    if (this.#heads?.connected && this.#announced >= 0) return this.#announced;
    try {
      return await this.#provider.getBlockNumber();
    } catch {
      return this.#lastBlock; // node unreachable: keep waiting until deadlines; the outbox reconciles the rest
    }
  }

  /** Until a block is announced or a waiter comes (subscription), or `pollMs` (polling). */
  async #sleep(): Promise<void> {
    const subscribed = this.#heads?.connected === true;
    if (subscribed && (this.#announced > this.#lastBlock || this.#fresh.size > 0)) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, subscribed ? QUIET_MS : this.#pollMs);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.#wake = subscribed ? done : undefined;
    });
    this.#wake = undefined;
  }

  async #loop(): Promise<void> {
    this.#running = true;
    let lastFullCheck = Date.now();
    try {
      while (this.#waiters.size > 0) {
        const block = await this.#head();
        // A chain that went back (restarted from an older snapshot) is followed from where it is now.
        if (block < this.#lastBlock) this.#lastBlock = block;
        const due = Date.now() - lastFullCheck >= FULL_CHECK_MS;
        if (this.#lastBlock < 0 || block - this.#lastBlock > MAX_BLOCKS_READ || due) {
          lastFullCheck = Date.now();
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
        if (this.#waiters.size > 0) await this.#sleep();
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
