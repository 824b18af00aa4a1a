/** The one INSERT the stores write: a row whose keys are its columns in camelCase (`chainTxId` → `chain_tx_id`). */
import type { Db } from "../db/queryable.ts";

/** Inserts `row` into `table`; the `returning` columns of the new row, if asked for. */
export async function insertRow(db: Db, table: string, row: object, returning?: string) {
  const columns = Object.keys(row).map((key) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`));
  const values = columns.map((_, i) => `$${i + 1}`).join(", ");
  const { rows } = await db.query(
    `INSERT INTO ${table} (${columns.join(", ")}) VALUES (${values})${returning ? ` RETURNING ${returning}` : ""}`,
    Object.values(row),
  );
  return rows[0];
}
