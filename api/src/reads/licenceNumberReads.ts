/** A licence number as people read it (RL-2026-000001: the request number) → its token id. */
import type pg from "pg";

export async function tokenIdOfLicenceNumber(pool: pg.Pool, licenceNumber: string): Promise<bigint | undefined> {
  const { rows } = await pool.query(`SELECT token_id FROM requests WHERE request_number = $1`, [
    licenceNumber.toUpperCase(),
  ]);
  return rows.length > 0 ? BigInt(rows[0].token_id) : undefined;
}
