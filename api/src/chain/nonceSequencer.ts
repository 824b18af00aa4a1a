/**
 * Per-wallet nonce sequencing that holds across API processes sharing one Postgres, with group commit.
 *
 * Writes for one wallet queue in memory. A worker per wallet takes everything queued (up to MAX_BATCH), holds the
 * wallet's session advisory lock (so no other process takes nonces meanwhile), records each transaction with the
 * next nonce inside ONE database transaction (one fsync for the whole batch), commits, and only then broadcasts
 * them, all at once and in nonce order: the jobs' broadcasts are started together, so the provider sends them as
 * one JSON-RPC batch, which the node takes in order (and an automining node often mines in one block). A record
 * that fails rolls back to its savepoint and takes no nonce.
 *
 * A broadcast the node refuses outright leaves a gap at its nonce. When no later transaction of the batch was taken,
 * the nonces from the first refused one are given back. When a later one was taken (it waits in the node's pool for
 * the gap), the refused transaction is marked FAILED and its nonce is filled by `fillNonce` (a transaction that does
 * nothing), so the later ones are mined as recorded.
 */
import { createHash } from "node:crypto";
import type pg from "pg";
import { NodeRefusedError } from "./chainErrors.ts";

const MAX_BATCH = 64;

/** 64-bit advisory lock key for a wallet address. */
export function walletLockKey(address: string): bigint {
  return createHash("sha256").update(`wallet:${address.toLowerCase()}`).digest().readBigInt64BE(0);
}

export interface NonceTicket {
  nonce: bigint;
  /** The connection holding the wallet's lock, inside the open DB transaction: record with it. */
  client: pg.PoolClient;
}

export interface SequencedJob<T extends { id: string; nonce: bigint }> {
  record(ticket: NonceTicket): Promise<T>;
  /**
   * Runs after COMMIT, still under the wallet's lock, started in nonce order together with the batch's other
   * broadcasts. Throws NodeRefusedError when the node refused the transaction outright (it is in no pool); any other
   * error leaves it recorded (PENDING) for reconciliation.
   */
  broadcast(recorded: T, client: pg.PoolClient): Promise<void>;
}

/**
 * Records, with `client` (inside an open database transaction), a transaction of `address` that takes `nonce` and
 * does nothing; returns the function that broadcasts it once that transaction is committed.
 */
export type NonceFiller = (address: string, nonce: bigint, client: pg.PoolClient) => Promise<() => Promise<void>>;

interface Queued {
  job: SequencedJob<{ id: string; nonce: bigint }>;
  resolve: (value: { id: string; nonce: bigint }) => void;
  reject: (error: unknown) => void;
}

export class NonceSequencer {
  readonly #pool: pg.Pool;
  readonly #fillNonce: NonceFiller;
  readonly #queues = new Map<string, Queued[]>();
  readonly #workers = new Set<string>();

  constructor(pool: pg.Pool, fillNonce: NonceFiller) {
    this.#pool = pool;
    this.#fillNonce = fillNonce;
  }

  run<T extends { id: string; nonce: bigint }>(address: string, job: SequencedJob<T>): Promise<T> {
    const key = address.toLowerCase();
    return new Promise<T>((resolve, reject) => {
      const queue = this.#queues.get(key) ?? [];
      queue.push({ job: job as unknown as Queued["job"], resolve: resolve as Queued["resolve"], reject });
      this.#queues.set(key, queue);
      if (!this.#workers.has(key)) void this.#work(key);
    });
  }

  async #work(address: string): Promise<void> {
    this.#workers.add(address);
    try {
      for (let queue = this.#queues.get(address); queue && queue.length > 0; queue = this.#queues.get(address)) {
        // The batch is taken once the wallet's lock is held: what queued while waiting for it goes in too.
        let batch: Queued[] | undefined;
        const take = () => (batch = queue!.splice(0, MAX_BATCH));
        await this.#runBatch(address, take).catch((error) => (batch ?? take()).forEach((q) => q.reject(error)));
      }
    } finally {
      this.#workers.delete(address);
      this.#queues.delete(address);
    }
  }

  /** All broadcasts at once (one JSON-RPC batch), then each outcome in nonce order. */
  async #broadcastTogether(address: string, recorded: Recorded, client: pg.PoolClient): Promise<void> {
    const outcomes = await Promise.allSettled(recorded.map(({ queued, value }) => queued.job.broadcast(value, client)));
    const refused = (i: number) => outcomes[i].status === "rejected" && outcomes[i].reason instanceof NodeRefusedError;
    const lastTaken = outcomes.findLastIndex((o, i) => !refused(i));
    for (let i = 0; i < recorded.length; i++) {
      const { queued, value } = recorded[i];
      const outcome = outcomes[i];
      if (outcome.status === "fulfilled") {
        queued.resolve(value);
      } else if (!refused(i)) {
        queued.reject(outcome.reason); // e.g. the node is unreachable: stays PENDING, re-broadcast later
      } else if (i > lastTaken) {
        // Refused, and nothing after it was taken: give back this nonce and every later one.
        // Marked FAILED, their nonces given back (nothing later of the wallet reached the node).
        const rest = recorded.slice(i);
        const reason = `not broadcast: the node refused nonce ${value.nonce}: ${(outcome.reason as Error).message}`;
        await client.query(
          `UPDATE chain_transactions SET status = 'FAILED', nonce_released = true, error_message = $2, updated_at = now() WHERE id = ANY($1)`,
          [rest.map((r) => r.value.id), reason.slice(0, 500)],
        );
        await client.query(`UPDATE wallets SET next_nonce = $2 WHERE address = $1`, [address, value.nonce.toString()]);
        // Every later one was refused too (none after lastTaken was taken).
        rest.forEach((later, j) => later.queued.reject((outcomes[i + j] as PromiseRejectedResult).reason));
        return;
      } else {
        // Refused, but a later one waits in the node's pool for this nonce: the filler takes the nonce, recorded
        // in the same database transaction that fails the refused one, then sent.
        await client.query("BEGIN");
        let send: () => Promise<void>;
        try {
          await client.query(
            `UPDATE chain_transactions SET status = 'FAILED', nonce_released = true, error_message = $2, updated_at = now() WHERE id = $1`,
            [value.id, `refused by the node; its nonce was filled: ${(outcome.reason as Error).message}`.slice(0, 500)],
          );
          send = await this.#fillNonce(address, value.nonce, client);
          await client.query("COMMIT");
        } catch (error) {
          await client.query("ROLLBACK").catch(() => {});
          throw error;
        }
        // A filler the node does not take either stays PENDING: reconciliation sends it again.
        await send().catch(() => {});
        queued.reject(outcome.reason);
      }
    }
  }

  async #runBatch(address: string, take: () => Queued[]): Promise<void> {
    const client = await this.#pool.connect();
    const lock = walletLockKey(address);
    let locked = false;
    try {
      await client.query("SELECT pg_advisory_lock($1)", [lock]);
      locked = true;
      const batch = take();

      // 1. Record every job with consecutive nonces in one transaction.
      const recorded: Recorded = [];
      await client.query("BEGIN");
      try {
        const { rows } = await client.query(`SELECT next_nonce FROM wallets WHERE address = $1 FOR UPDATE`, [address]);
        if (!rows[0]) throw new Error(`no custodial wallet ${address}`);
        let nonce = BigInt(rows[0].next_nonce);
        for (const queued of batch) {
          await client.query("SAVEPOINT job");
          try {
            const value = await queued.job.record({ nonce, client });
            await client.query("RELEASE SAVEPOINT job");
            recorded.push({ queued, value });
            nonce += 1n;
          } catch (error) {
            await client.query("ROLLBACK TO SAVEPOINT job");
            queued.reject(error);
          }
        }
        await client.query(`UPDATE wallets SET next_nonce = $2 WHERE address = $1`, [address, nonce.toString()]);
        await client.query("COMMIT");
      } catch (error) {
        await client.query("ROLLBACK").catch(() => {});
        throw error;
      }

      // 2. Broadcast in nonce order.
      await this.#broadcastTogether(address, recorded, client);
    } finally {
      if (locked) await client.query("SELECT pg_advisory_unlock($1)", [lock]).catch(() => {});
      client.release();
    }
  }
}

type Recorded = { queued: Queued; value: { id: string; nonce: bigint } }[];
