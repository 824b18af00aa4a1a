/**
 * Per-wallet nonce sequencing that holds across API processes sharing one Postgres: a session advisory lock per
 * wallet serialises "take the next nonce, record the signed transaction, broadcast it", so transactions of one
 * wallet reach the node strictly in nonce order and two processes never take the same nonce.
 *
 * Within a process, callers for the same wallet first queue in memory, so a burst holds one pooled connection
 * per wallet (not one per caller, all blocked on the same lock) and the pool never starves.
 */
import { createHash } from "node:crypto";
import type pg from "pg";

/** 64-bit advisory lock key for a wallet address. */
export function walletLockKey(address: string): bigint {
  return createHash("sha256").update(`wallet:${address.toLowerCase()}`).digest().readBigInt64BE(0);
}

export interface NonceTicket {
  nonce: bigint;
  /** The connection holding the wallet's lock: record the transaction with it, inside its open DB transaction. */
  client: pg.PoolClient;
}

const queues = new Map<string, Promise<unknown>>();

/** Runs `task` after every earlier task queued for the same wallet in this process. */
function serialised<T>(address: string, task: () => Promise<T>): Promise<T> {
  const key = address.toLowerCase();
  const previous = queues.get(key) ?? Promise.resolve();
  const next = previous.then(task, task);
  const tail = next.catch(() => {});
  queues.set(key, tail);
  void tail.then(() => {
    if (queues.get(key) === tail) queues.delete(key);
  });
  return next;
}

/**
 * Runs `record` (inside a DB transaction, with the wallet's next nonce) then `after` (after COMMIT, still holding
 * the wallet's lock and on the same connection: the broadcast). The nonce is consumed only if `record` commits.
 */
export function withNextNonce<T>(
  pool: pg.Pool,
  address: string,
  record: (ticket: NonceTicket) => Promise<T>,
  after: (recorded: T, client: pg.PoolClient) => Promise<void>,
): Promise<T> {
  return serialised(address, async () => {
    const client = await pool.connect();
    const key = walletLockKey(address);
    let locked = false;
    try {
      await client.query("SELECT pg_advisory_lock($1)", [key]);
      locked = true;
      await client.query("BEGIN");
      let recorded: T;
      try {
        const { rows } = await client.query(`SELECT next_nonce FROM wallets WHERE address = $1 FOR UPDATE`, [address.toLowerCase()]);
        if (!rows[0]) throw new Error(`no custodial wallet ${address}`);
        const nonce = BigInt(rows[0].next_nonce);
        recorded = await record({ nonce, client });
        await client.query(`UPDATE wallets SET next_nonce = $2 WHERE address = $1`, [address.toLowerCase(), (nonce + 1n).toString()]);
        await client.query("COMMIT");
      } catch (error) {
        await client.query("ROLLBACK").catch(() => {});
        throw error;
      }
      await after(recorded, client);
      return recorded;
    } finally {
      if (locked) await client.query("SELECT pg_advisory_unlock($1)", [key]).catch(() => {});
      client.release();
    }
  });
}
