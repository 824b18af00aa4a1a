/**
 * A request's documents as the document registry has them (index.documents): index on chain, latest version, and
 * the SHA-256 of every anchored version (index.document_versions), which a decision names (by hash) on chain.
 */
import type { Hex } from "../../../abis/index.ts";
import type { Db } from "../db/queryable.ts";

export interface AnchoredDocument {
  documentId: string;
  /** The document's position in the token's packed document word (0..15). */
  docIndex: number;
  latestVersion: number;
  /** SHA-256 of each anchored version, by version number. */
  hashes: Map<number, Hex>;
}

export async function anchoredDocumentsOf(db: Db, tokenId: bigint): Promise<AnchoredDocument[]> {
  const { rows } = await db.query(
    `SELECT d.document_id, d.doc_index, d.latest_version, d.latest_hash,
            COALESCE(json_agg(json_build_object('version', v.version, 'hash', v.sha256_hash))
                     FILTER (WHERE v.sha256_hash IS NOT NULL), '[]') AS versions
       FROM index.documents d
       LEFT JOIN index.document_versions v ON v.token_id = d.token_id AND v.doc_index = d.doc_index
      WHERE d.token_id = $1
      GROUP BY d.document_id, d.doc_index, d.latest_version, d.latest_hash`,
    [tokenId.toString()],
  );
  return rows.map((row) => {
    const hashes = new Map<number, Hex>(
      (row.versions as { version: number; hash: Hex }[]).map((v) => [Number(v.version), v.hash]),
    );
    hashes.set(Number(row.latest_version), row.latest_hash as Hex);
    return {
      documentId: row.document_id,
      docIndex: Number(row.doc_index),
      latestVersion: Number(row.latest_version),
      hashes,
    };
  });
}
