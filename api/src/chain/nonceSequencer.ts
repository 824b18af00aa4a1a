/**
 * Per-wallet nonce sequencing that holds across API processes sharing one Postgres, with group commit.
 *
 * Writes for one wallet queue in memory. A worker per wallet takes everything queued (up to MAX_BATCH), holds the
 * wallet's session advisory lock (so no other process takes nonces meanwhile), records each transaction with the
 * next nonce inside ONE database transaction (one fsync for the whole batch), commits, and only then broadcasts
 * them strictly in nonce order. A record that fails rolls back to its savepoint and takes no nonce.
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

/** Thrown by `broadcast` when the node refused the transaction outright (it is in no pool). */

export interface SequencedJob<T extends { id: string; nonce: bigint }> {
  record(ticket: NonceTicket): Promise<T>;
  /** Runs after COMMIT, in nonce order, still under the wallet's lock. */
  broadcast(recorded: T, client: pg.PoolClient): Promise<void>;
}

interface Queued {
  job: SequencedJob<{ id: string; nonce: bigint }>;
  resolve: (value: { id: string; nonce: bigint }) => void;
  reject: (error: unknown) => void;
}

export class NonceSequencer {
  readonly #pool: pg.Pool;
  readonly #queues = new Map<string, Queued[]>();
  readonly #workers = new Set<string>();

  constructor(pool: pg.Pool) {
    this.#pool = pool;
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
        const batch = queue.splice(0, MAX_BATCH);
        await this.#runBatch(address, batch).catch((error) => batch.forEach((q) => q.reject(error)));
      }
    } finally {
      this.#workers.delete(address);
      this.#queues.delete(address);
    }
  }

  async #runBatch(address: string, batch: Queued[]): Promise<void> {
    const client = await this.#pool.connect();
    const lock = walletLockKey(address);
    let locked = false;
    try {
      await client.query("SELECT pg_advisory_lock($1)", [lock]);
      locked = true;

      // 1. Record every job with consecutive nonces in one transaction.
      const recorded: { queued: Queued; value: { id: string; nonce: bigint } }[] = [];
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
      for (let i = 0; i < recorded.length; i++) {
        const { queued, value } = recorded[i];
        try {
          await queued.job.broadcast(value, client);
          queued.resolve(value);
        } catch (error) {
          if (!(error instanceof NodeRefusedError)) {
            // E.g. the node is unreachable: the transaction stays recorded (PENDING) and is re-broadcast later.
            queued.reject(error);
            continue;
          }
          // Refused outright: this and every later nonce of the batch never reached a pool. Give the nonces back
          // (we still hold the lock, so nothing later was assigned) and fail those jobs.
          const rest = recorded.slice(i);
          await client.query(
            `UPDATE chain_transactions SET status = 'FAILED', nonce_released = true, error_message = $2, updated_at = now() WHERE id = ANY($1)`,
            [
              rest.map((r) => r.value.id),
              `not broadcast: the node refused nonce ${value.nonce}: ${error.message}`.slice(0, 500),
            ],
          );
          await client.query(`UPDATE wallets SET next_nonce = $2 WHERE address = $1`, [
            address,
            value.nonce.toString(),
          ]);
          queued.reject(error);
          for (const later of rest.slice(1))
            later.queued.reject(
              new NodeRefusedError("an earlier transaction of the same wallet was refused by the node"),
            );
          break;
        }
      }
    } finally {
      if (locked) await client.query("SELECT pg_advisory_unlock($1)", [lock]).catch(() => {});
      client.release();
    }
  }
}
