/**
 * What public verification reads from the index and the API's rows: names, numbers and transaction hashes. Whether
 * a licence or document is valid is the chain's answer (domain/verification/), never these rows'.
 */
import { readTogether, type ReadPart, type Rows } from "../db/readTogether.ts";
import type { Db, DbPool } from "../db/queryable.ts";

/** The licence's request, mint, issuance and the approvals the index mirrored. */
function licenceRecordParts(token: string) {
  return {
    request: {
      sql: `SELECT request_number, request_type, applicant_name, applicant_id FROM requests WHERE token_id = $1`,
      params: [token],
    },
    licence: { sql: `SELECT issued_at, created_tx FROM index.licences WHERE token_id = $1`, params: [token] },
    issuance: {
      sql: `SELECT tx_hash FROM index.licence_status_history WHERE token_id = $1 AND from_status = 'SUBMITTED' AND to_status = 'APPROVED' ORDER BY block_number DESC, log_index DESC LIMIT 1`,
      params: [token],
    },
    decisions: {
      sql: `SELECT DISTINCT ON (a.stage, a.department_id) a.stage, a.department_id, a.tx_hash, a.timestamp, a.signer, a.custody, d.code, ad.name
            FROM index.approvals a LEFT JOIN index.departments d ON d.department_id = a.department_id LEFT JOIN departments ad ON ad.code = d.code
            WHERE a.token_id = $1 AND a.decision = 'APPROVED' ORDER BY a.stage, a.department_id, a.block_number DESC, a.log_index DESC`,
      params: [token],
    },
  } satisfies Record<string, ReadPart>;
}

export type LicenceRecord = Record<keyof ReturnType<typeof licenceRecordParts>, Rows>;

export function licenceRecord(pool: DbPool, tokenId: bigint): Promise<LicenceRecord> {
  return readTogether(pool, licenceRecordParts(tokenId.toString()));
}

/**
 * The licence whose record answers for a hash anchored in several requests: on an issued licence, the document's
 * latest version, an APPROVED licence, the earliest anchored.
 */
export async function preferredTokenOfHash(db: Db, hash: string): Promise<string | undefined> {
  const { rows } = await db.query(
    `SELECT v.token_id FROM index.document_versions v
       JOIN index.licences l ON l.token_id = v.token_id
       JOIN index.documents d ON d.token_id = v.token_id AND d.doc_index = v.doc_index
      WHERE v.sha256_hash = $1
      ORDER BY (l.issued_at IS NOT NULL) DESC, (d.latest_hash = v.sha256_hash) DESC, (l.status = 'APPROVED') DESC,
               v.block_number, v.token_id
      LIMIT 1`,
    [hash],
  );
  return rows[0]?.token_id ?? undefined;
}

/** The request and type of an anchored document, and the transaction that anchored this hash. */
export async function anchoredDocumentRecord(
  db: Db,
  anchor: { tokenId: string; docIndex: number; documentId: string; hash: string },
): Promise<{ requestId: string | null; docType: string | null; transactionHash: string | null }> {
  const [document, version] = await Promise.all([
    // The type as the chain recorded it (DocumentAnchored of version 1, mirrored by the index): a document anchored
    // without this API (by the operator's key) has no row of ours but still has a type.
    db.query(
      `SELECT d.request_id,
              COALESCE((SELECT doc_type FROM index.documents WHERE token_id = $1 AND doc_index = $2), d.doc_type) AS doc_type
         FROM (SELECT 1) one LEFT JOIN documents d ON d.id = $3::uuid`,
      [anchor.tokenId, anchor.docIndex, anchor.documentId],
    ),
    db.query(`SELECT tx_hash FROM index.document_versions WHERE token_id = $1 AND sha256_hash = $2`, [
      anchor.tokenId,
      anchor.hash,
    ]),
  ]);
  return {
    requestId: document.rows[0]?.request_id ?? null,
    docType: document.rows[0]?.doc_type ?? null,
    transactionHash: version.rows[0]?.tx_hash ?? null,
  };
}
