/**
 * How far the indexer has got: the views schema's `_ponder_checkpoint` row, which Ponder updates in the same
 * database transaction as the rows it indexed, so once it reaches block N every row up to N is readable.
 *
 * Writes wait here for their block (read-your-writes). Ponder notifies `index_live_query` on every update of that
 * row (its live-query trigger, re-created with the views), so one LISTENing connection per process wakes the
 * waiters when a block is indexed instead of a poll every few milliseconds; a slow poll stays as a safety net
 * (the notification is not sent while the indexer swaps builds, and the connection may drop). Health checks read
 * the same value.
 */
import pg from "pg";

export interface IndexStatus {
  block: number;
  timestamp: number;
}

/** Ponder's channel for the views schema `index` (`<views schema>_live_query`). */
const CHANNEL = "index_live_query";
/** The safety poll while writes wait and a notification may not come. */
const SAFETY_POLL_MS = 250;
/** Without a listening connection (it dropped, or none was given): the poll. */
const POLL_MS = 10;
const RELISTEN_MS = 1_000;

export class IndexProgress {
  readonly #pool: pg.Pool;
  readonly #query: string;
  readonly #listenWith?: () => pg.Client;
  #listener?: pg.Client;
  #listening = false;
  #stopped = false;
  #latest = -1;
  #waiters: { block: number; resolve: (ok: boolean) => void; deadline: number }[] = [];
  #running = false;
  /** A notification came since the last read (it may come while a read runs: not lost). */
  #notified = false;
  #wake?: () => void;
  /** Counts the indexer's notifications (and reconnections, after which one may have been missed). */
  #generation = 0;

  /** `listenWith` makes the connection that LISTENs (not from the pool: it is held for the process's life). */
  constructor(pool: pg.Pool, listenWith?: () => pg.Client) {
    this.#pool = pool;
    this.#listenWith = listenWith;
    // latest_checkpoint: 10 digits of block timestamp, …, 16 digits of block number from position 27.
    this.#query = `SELECT substring(latest_checkpoint from 27 for 16)::bigint AS block,
                          substring(latest_checkpoint from 1 for 10)::bigint AS timestamp
                   FROM index._ponder_checkpoint ORDER BY 1 DESC LIMIT 1`;
  }

  /** Starts listening for the indexer's notifications (reconnecting after a drop). */
  async start(): Promise<void> {
    this.#stopped = false;
    await this.#listen();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    const listener = this.#listener;
    this.#listener = undefined;
    this.#listening = false;
    await listener?.end().catch(() => {});
  }

  /** Last indexed block, read now; undefined when the index is not there (yet). */
  async status(): Promise<IndexStatus | undefined> {
    try {
      const { rows } = await this.#pool.query(this.#query);
      if (!rows[0]) return undefined;
      const status = { block: Number(rows[0].block), timestamp: Number(rows[0].timestamp) };
      if (status.block > this.#latest) this.#generation++; // seen before its notification arrived
      this.#latest = Math.max(this.#latest, status.block);
      return status;
    } catch {
      return undefined;
    }
  }

  /**
   * A number that changes whenever the index may have changed (it counts the indexer's notifications); undefined
   * while not listening, when a change would go unseen.
   */
  generation(): number | undefined {
    return this.#listening ? this.#generation : undefined;
  }

  /** Resolves true once the indexer has processed `block`, false after `timeoutMs`. */
  waitForBlock(block: number, timeoutMs: number): Promise<boolean> {
    if (this.#latest >= block) return Promise.resolve(true);
    return new Promise((resolve) => {
      this.#waiters.push({ block, resolve, deadline: Date.now() + timeoutMs });
      if (!this.#running) void this.#loop();
    });
  }

  async #listen(): Promise<void> {
    if (!this.#listenWith || this.#stopped) return;
    const listener = this.#listenWith();
    this.#listener = listener;
    const retry = () => {
      if (this.#listener !== listener) return;
      this.#listener = undefined;
      this.#listening = false;
      listener.end().catch(() => {});
      if (!this.#stopped) setTimeout(() => void this.#listen(), RELISTEN_MS).unref();
    };
    listener.on("error", retry);
    listener.on("end", retry);
    listener.on("notification", () => {
      this.#generation++;
      this.#notified = true;
      this.#wake?.();
    });
    try {
      await listener.connect();
      await listener.query(`LISTEN ${CHANNEL}`);
      this.#listening = true;
      this.#generation++;
      this.#notified = true; // a block indexed while connecting is read now
      this.#wake?.();
    } catch {
      retry();
    }
  }

  async #loop(): Promise<void> {
    this.#running = true;
    try {
      while (this.#waiters.length > 0) {
        this.#notified = false;
        await this.status();
        const now = Date.now();
        this.#waiters = this.#waiters.filter((w) => {
          if (this.#latest >= w.block) w.resolve(true);
          else if (now >= w.deadline) w.resolve(false);
          else return true;
          return false;
        });
        if (this.#waiters.length > 0) await this.#sleep();
      }
    } finally {
      this.#running = false;
    }
  }

  /** Until the indexer notifies (or the safety poll), or the short poll when not listening. */
  async #sleep(): Promise<void> {
    if (this.#notified) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, this.#listening ? SAFETY_POLL_MS : POLL_MS);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.#wake = done;
    });
    this.#wake = undefined;
  }
}
