/**
 * Documents and their versions as this API records them (app.documents, app.document_versions): file name, storage
 * key, size and type of each version, beside the hash anchored on chain.
 */
import type { Db } from "../db/queryable.ts";

export interface NewDocument {
  id: string;
  requestId: string;
  docType: string;
  originalFilename: string;
  description: string | null;
}

export async function insertDocument(db: Db, document: NewDocument): Promise<void> {
  await db.query(
    `INSERT INTO documents (id, request_id, doc_type, original_filename, description) VALUES ($1, $2, $3, $4, $5)`,
    [document.id, document.requestId, document.docType, document.originalFilename, document.description],
  );
}

export interface NewDocumentVersion {
  documentId: string;
  version: number;
  /** 0x-prefixed SHA-256 of the file. */
  sha256: string;
  fileSize: number;
  mimeType: string;
  originalFilename: string;
  storageKey: string;
  description: string | null;
  /** `kind:id` of the principal that uploaded it. */
  uploadedBy: string;
  /** The outbox record of its anchoring. */
  chainTxId: string;
  activeContent: string[];
}

/** Records a version; returns its creation time. */
export async function insertDocumentVersion(db: Db, version: NewDocumentVersion): Promise<Date> {
  const { rows } = await db.query(
    `INSERT INTO document_versions (document_id, version, sha256, file_size, mime_type, original_filename, storage_key,
                                    description, uploaded_by, chain_tx_id, active_content)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING created_at`,
    [
      version.documentId,
      version.version,
      version.sha256,
      version.fileSize,
      version.mimeType,
      version.originalFilename,
      version.storageKey,
      version.description,
      version.uploadedBy,
      version.chainTxId,
      version.activeContent,
    ],
  );
  return rows[0].created_at;
}

/** Storage keys of the versions the outbox transaction `txId` anchored, if it failed on chain (none otherwise). */
export async function storageKeysOfFailedAnchoring(db: Db, txId: string): Promise<string[]> {
  const { rows } = await db.query(
    `SELECT v.storage_key FROM document_versions v JOIN chain_transactions t ON t.id = v.chain_tx_id
     WHERE t.id = $1 AND t.status = 'FAILED'`,
    [txId],
  );
  return rows.map((row) => row.storage_key as string);
}
