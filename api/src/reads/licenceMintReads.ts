/** Where a licence was minted (index.licences): the block whose LicenceMinted log holds its applicant commitment. */
import type { Db } from "../db/queryable.ts";

export async function mintBlockOf(db: Db, tokenId: bigint): Promise<number | undefined> {
  const { rows } = await db.query(`SELECT created_block FROM index.licences WHERE token_id = $1`, [tokenId.toString()]);
  return rows[0] ? Number(rows[0].created_block) : undefined;
}
