/**
 * Documents and their versions as this API records them (app.documents, app.document_versions): file name, storage
 * key, size and type of each version, beside the hash anchored on chain.
 */
import type { Db } from "../db/queryable.ts";
import { insertRow } from "./insertRow.ts";

export interface NewDocument {
  id: string;
  requestId: string;
  docType: string;
  originalFilename: string;
  description: string | null;
}

export async function insertDocument(db: Db, document: NewDocument): Promise<void> {
  await insertRow(db, "documents", document);
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
  return (await insertRow(db, "document_versions", version, "created_at")).created_at;
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

const UPLOAD_BUDGET_LOCK_CLASS = 0x444255; // "DBU": advisory lock class of document upload budgets, keyed by applicant

/**
 * Holds the applicant's upload-budget lock until the end of the open database transaction of `db`: two uploads of
 * one applicant (in any API process) count their budget and record their version one after the other.
 */
export async function lockUploadBudget(db: Db, applicantId: string): Promise<void> {
  await db.query(`SELECT pg_advisory_xact_lock($1, hashtext($2))`, [UPLOAD_BUDGET_LOCK_CLASS, applicantId]);
}

/** A version counted against its applicant's budget: when it was recorded and its size. */
export interface BudgetedUpload {
  createdAt: Date;
  fileSize: number;
}

/**
 * The versions recorded for the applicant's requests in the last `windowSeconds` (by anyone acting for them),
 * oldest first, and the database's clock they were measured against.
 */
export async function uploadsInWindow(
  db: Db,
  applicantId: string,
  windowSeconds: number,
): Promise<{ now: Date; uploads: BudgetedUpload[] }> {
  const { rows } = await db.query(
    `SELECT now() AS now,
            coalesce((SELECT json_agg(json_build_object('at', v.created_at, 'size', v.file_size) ORDER BY v.created_at)
                      FROM requests r
                      JOIN documents d ON d.request_id = r.id
                      JOIN document_versions v ON v.document_id = d.id
                      WHERE r.applicant_id = $1 AND v.created_at > now() - make_interval(secs => $2)), '[]') AS uploads`,
    [applicantId, windowSeconds],
  );
  const uploads = rows[0].uploads as { at: string; size: number | string }[];
  return {
    now: rows[0].now,
    uploads: uploads.map((u) => ({ createdAt: new Date(u.at), fileSize: Number(u.size) })),
  };
}
