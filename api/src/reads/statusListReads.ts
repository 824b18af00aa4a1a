/**
 * What the status-list anchoring job reads of the index: the suspended and revoked licences of one list, which lists
 * a status change touched since a block, and which lists are in use (hold an issued licence).
 */
import type { Db } from "../db/queryable.ts";
import type { LicenceStatusEntry } from "../domain/credentials/statusLists.ts";

/** The statuses a list records; every other status is 0 in all three lists. */
const LISTED = ["SUSPENDED", "REVOKED"];

/** The licences of list `list` (token ids list × size … (list + 1) × size − 1) that a status list marks. */
export async function statusListEntries(db: Db, list: number, size: number): Promise<LicenceStatusEntry[]> {
  const first = BigInt(list) * BigInt(size);
  const { rows } = await db.query(
    `SELECT token_id, status FROM index.licences WHERE token_id >= $1 AND token_id < $2 AND status = ANY($3)`,
    [first.toString(), (first + BigInt(size)).toString(), LISTED],
  );
  return rows.map((row) => ({ tokenId: BigInt(row.token_id), status: row.status }));
}

/**
 * The lists whose licences were issued, suspended, reinstated or revoked in blocks after `afterBlock` (up to what
 * the index holds): the lists whose digests may have changed, or that hold their first issued licence.
 */
export async function statusListsChangedAfter(db: Db, afterBlock: number, size: number): Promise<number[]> {
  const { rows } = await db.query(
    `SELECT DISTINCT token_id / $2 AS list FROM index.licence_status_history
     WHERE block_number > $1 AND (to_status = ANY($3) OR from_status = ANY($3))`,
    [afterBlock, size, [...LISTED, "APPROVED"]],
  );
  return rows.map((row) => Number(row.list));
}

/** Every list holding an issued licence: each must have an anchor. */
export async function statusListsInUse(db: Db, size: number): Promise<number[]> {
  const { rows } = await db.query(
    `SELECT DISTINCT token_id / $1 AS list FROM index.licences WHERE issued_at IS NOT NULL ORDER BY 1`,
    [size],
  );
  return rows.map((row) => Number(row.list));
}
