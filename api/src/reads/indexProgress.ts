/**
 * How far the indexer has got: Ponder's /status reports the last block it processed per chain. One shared poll
 * loop runs while writes wait for their block (read-your-writes), and health checks read the same value.
 */
export interface IndexStatus {
  block: number;
  timestamp?: number;
}

export class IndexProgress {
  readonly #statusUrl: string;
  readonly #pollMs: number;
  #latest = -1;
  #waiters: { block: number; resolve: (ok: boolean) => void; deadline: number }[] = [];
  #running = false;

  constructor(indexerUrl: string, pollMs = 15) {
    this.#statusUrl = `${indexerUrl}/status`;
    this.#pollMs = pollMs;
  }

  /** Last indexed block, fetched now; undefined when the indexer does not answer. */
  async status(): Promise<IndexStatus | undefined> {
    try {
      const response = await fetch(this.#statusUrl, { signal: AbortSignal.timeout(2_000) });
      if (!response.ok) return undefined;
      const body = (await response.json()) as Record<string, { block?: { number?: number; timestamp?: number } }>;
      const chain = Object.values(body)[0];
      const number = chain?.block?.number;
      if (typeof number !== "number") return undefined;
      this.#latest = Math.max(this.#latest, number);
      return { block: number, timestamp: chain.block?.timestamp };
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
