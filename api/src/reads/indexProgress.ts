/**
 * How far the indexer has got: the views schema's `_ponder_checkpoint` row, which Ponder updates in the same
 * database transaction as the rows it indexed, so once it reaches block N every row up to N is readable. One shared
 * poll loop runs while writes wait for their block (read-your-writes); health checks read the same value.
 */
import type pg from "pg";

export interface IndexStatus {
  block: number;
  timestamp: number;
}

export class IndexProgress {
  readonly #pool: pg.Pool;
  readonly #query: string;
  readonly #pollMs: number;
  #latest = -1;
  #waiters: { block: number; resolve: (ok: boolean) => void; deadline: number }[] = [];
  #running = false;

  constructor(pool: pg.Pool, pollMs = 10) {
    this.#pool = pool;
    this.#pollMs = pollMs;
    // latest_checkpoint: 10 digits of block timestamp, …, 16 digits of block number from position 27.
    this.#query = `SELECT substring(latest_checkpoint from 27 for 16)::bigint AS block,
                          substring(latest_checkpoint from 1 for 10)::bigint AS timestamp
                   FROM index._ponder_checkpoint ORDER BY 1 DESC LIMIT 1`;
  }

  /** Last indexed block, read now; undefined when the index is not there (yet). */
  async status(): Promise<IndexStatus | undefined> {
    try {
      const { rows } = await this.#pool.query(this.#query);
      if (!rows[0]) return undefined;
      const status = { block: Number(rows[0].block), timestamp: Number(rows[0].timestamp) };
      this.#latest = Math.max(this.#latest, status.block);
      return status;
    } catch {
      return undefined;
    }
  }

  /** Resolves true once the indexer has processed `block`, false after `timeoutMs`. */
  waitForBlock(block: number, timeoutMs: number): Promise<boolean> {
    if (this.#latest >= block) return Promise.resolve(true);
    return new Promise((resolve) => {
      this.#waiters.push({ block, resolve, deadline: Date.now() + timeoutMs });
      if (!this.#running) void this.#loop();
    });
  }

  async #loop(): Promise<void> {
    this.#running = true;
    try {
      while (this.#waiters.length > 0) {
        await this.status();
        const now = Date.now();
        this.#waiters = this.#waiters.filter((w) => {
          if (this.#latest >= w.block) w.resolve(true);
          else if (now >= w.deadline) w.resolve(false);
          else return true;
          return false;
        });
        if (this.#waiters.length > 0) await new Promise((r) => setTimeout(r, this.#pollMs));
      }
    } finally {
      this.#running = false;
    }
  }
}
