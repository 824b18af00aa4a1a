/**
 * A document version whose anchoring transaction was mined and reverted is never visible (reads join the index,
 * which has no record of it), but its file was stored before the transaction was sent. This deletes those files.
 * The rows stay, as the record of the attempt. Safe to run again: deleting a missing object is not an error.
 */
import { storageKeysOfFailedAnchoring } from "../../stores/documentRecords.ts";
import type { DomainContext } from "../context.ts";

export async function discardUnanchoredFiles(
  context: Pick<DomainContext, "pool" | "documentStore" | "logger">,
  txId: string,
): Promise<number> {
  const keys = await storageKeysOfFailedAnchoring(context.pool, txId);
  for (const key of keys) await context.documentStore.delete(key);
  if (keys.length > 0)
    context.logger.info({ txId, files: keys.length }, "deleted files whose anchoring failed on chain");
  return keys.length;
}
