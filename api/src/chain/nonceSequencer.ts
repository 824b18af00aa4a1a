/**
 * Per-wallet nonce sequencing that holds across API processes sharing one Postgres: a session advisory lock per
 * wallet serialises "take the next nonce, record the signed transaction, broadcast it", so transactions of one
 * wallet reach the node strictly in nonce order and two processes never take the same nonce.
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

/**
 * Runs `record` (inside a DB transaction, with the wallet's next nonce) then `after` (after COMMIT, still holding
 * the wallet's lock: the broadcast). The nonce is consumed only if `record` commits.
 */
export async function withNextNonce<T>(
  pool: pg.Pool,
  address: string,
  record: (ticket: NonceTicket) => Promise<T>,
  after: (recorded: T) => Promise<void>,
): Promise<T> {
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
    await after(recorded);
    return recorded;
  } finally {
    if (locked) await client.query("SELECT pg_advisory_unlock($1)", [key]).catch(() => {});
    client.release();
  }
}
