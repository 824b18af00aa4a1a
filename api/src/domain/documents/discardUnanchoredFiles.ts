/**
 * A document version whose anchoring transaction was mined and reverted is never visible (reads join the index,
 * which has no record of it), but its file was stored before the transaction was sent. This deletes those files.
 * The rows stay, as the record of the attempt. Safe to run again: deleting a missing object is not an error.
 */
import type { DomainContext } from "../context.ts";

export async function discardUnanchoredFiles(context: Pick<DomainContext, "pool" | "documentStore" | "logger">, txId: string): Promise<number> {
  const { rows } = await context.pool.query(
    `SELECT v.storage_key FROM document_versions v JOIN chain_transactions t ON t.id = v.chain_tx_id WHERE t.id = $1 AND t.status = 'FAILED'`,
    [txId],
  );
  for (const row of rows) await context.documentStore.delete(row.storage_key);
  if (rows.length > 0) context.logger.info({ txId, files: rows.length }, "deleted files whose anchoring failed on chain");
  return rows.length;
}
