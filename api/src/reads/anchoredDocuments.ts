/** A request's documents as the document registry has them (index.documents): index on chain and latest version. */
import type { Db } from "../db/queryable.ts";

export interface AnchoredDocument {
  documentId: string;
  /** The document's position in the token's packed document word (0..15). */
  docIndex: number;
  latestVersion: number;
}

export async function anchoredDocumentsOf(db: Db, tokenId: bigint): Promise<AnchoredDocument[]> {
  const { rows } = await db.query(
    `SELECT document_id, doc_index, latest_version FROM index.documents WHERE token_id = $1`,
    [tokenId.toString()],
  );
  return rows.map((row) => ({
    documentId: row.document_id,
    docIndex: Number(row.doc_index),
    latestVersion: Number(row.latest_version),
  }));
}
