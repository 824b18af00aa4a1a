/**
 * Documents as the API shows them: each version's off-chain record (file, size, type, who uploaded it) joined with
 * its anchor as indexed from the chain. A version exists for readers once its hash is anchored and indexed.
 */
import type pg from "pg";
import { asDate, type ReadPart } from "../db/readTogether.ts";

export interface VersionView {
  version: number;
  hash: string;
  fileSize: number;
  mimeType: string;
  originalFilename: string;
  storageKey: string;
  /** Who uploaded the version, by role (as the timeline names them): never a client's id, the applicant reads it. */
  uploadedBy: UploaderRole;
  transactionHash: string;
  blockNumber: number;
  createdAt: Date;
}

export interface DocumentView {
  id: string;
  requestId: string;
  docType: string;
  description: string | null;
  versions: VersionView[]; // ascending, only those on chain
  current: VersionView;
  uploadedAt: Date;
  updatedAt: Date;
}

export const UPLOADER_ROLES = ["Applicant", "Administrator", "System client", "Licence platform"] as const;
export type UploaderRole = (typeof UPLOADER_ROLES)[number];

const SELECT = `
  SELECT d.id, d.request_id, d.doc_type, d.description, d.created_at,
         v.version, v.sha256, v.file_size, v.mime_type, v.original_filename, v.storage_key, v.uploaded_by, v.created_at AS version_created_at,
         iv.tx_hash, iv.block_number, r.applicant_id,
         EXISTS (SELECT 1 FROM oauth_clients c WHERE 'client:' || c.client_id = v.uploaded_by AND 'admin' = ANY(c.scopes)) AS uploaded_by_admin
  FROM documents d
  JOIN requests r ON r.id = d.request_id
  JOIN document_versions v ON v.document_id = d.id
  JOIN index.document_versions iv ON iv.token_id = r.token_id AND iv.sha256_hash = v.sha256`;

/** The role of `uploadedBy` (`kind:id` of the caller): the request's applicant, an administrator, a system client. */
function uploaderRole(uploadedBy: string, applicantId: string, administrator: boolean): UploaderRole {
  if (uploadedBy === `applicant:${applicantId}`) return "Applicant";
  if (uploadedBy.startsWith("client:")) return administrator ? "Administrator" : "System client";
  return "Licence platform";
}

/** Groups version rows (from `documentsOfRequestPart` or a plain query) into documents. */
export function groupDocuments(rows: Record<string, any>[]): DocumentView[] {
  const byId = new Map<string, DocumentView>();
  for (const row of rows) {
    const version: VersionView = {
      version: Number(row.version),
      hash: row.sha256,
      fileSize: Number(row.file_size),
      mimeType: row.mime_type,
      originalFilename: row.original_filename,
      storageKey: row.storage_key,
      uploadedBy: uploaderRole(row.uploaded_by, row.applicant_id, row.uploaded_by_admin === true),
      transactionHash: row.tx_hash,
      blockNumber: Number(row.block_number),
      createdAt: asDate(row.version_created_at),
    };
    const existing = byId.get(row.id);
    if (existing) {
      existing.versions.push(version);
    } else {
      byId.set(row.id, {
        id: row.id,
        requestId: row.request_id,
        docType: row.doc_type,
        description: row.description,
        versions: [version],
        current: version,
        uploadedAt: asDate(row.created_at),
        updatedAt: asDate(row.created_at),
      });
    }
  }
  for (const doc of byId.values()) {
    doc.versions.sort((a, b) => a.version - b.version);
    doc.current = doc.versions[doc.versions.length - 1];
    doc.uploadedAt = doc.versions[0].createdAt;
    doc.updatedAt = doc.current.createdAt;
  }
  return [...byId.values()].sort((a, b) => a.uploadedAt.getTime() - b.uploadedAt.getTime());
}

export const documentsOfRequestPart = (requestId: string): ReadPart => ({
  sql: `${SELECT} WHERE d.request_id = $1`,
  params: [requestId],
});

export async function documentsOfRequest(pool: pg.Pool, requestId: string): Promise<DocumentView[]> {
  const { sql, params } = documentsOfRequestPart(requestId);
  return groupDocuments((await pool.query(sql, params)).rows);
}

export async function findDocument(pool: pg.Pool, documentId: string): Promise<DocumentView | undefined> {
  const { rows } = await pool.query(`${SELECT} WHERE d.id = $1`, [documentId]);
  return groupDocuments(rows)[0];
}

export function documentJson(doc: DocumentView) {
  return {
    documentId: doc.id,
    docType: doc.docType,
    originalFilename: doc.current.originalFilename,
    currentVersion: doc.current.version,
    currentHash: doc.current.hash,
    uploadedAt: doc.uploadedAt.toISOString(),
    updatedAt: doc.updatedAt.toISOString(),
  };
}

/** The document version written with an outbox transaction (its anchoring), or undefined. */
export async function versionRecordedBy(
  pool: pg.Pool,
  outboxTxId: string,
): Promise<{ documentId: string; docType: string; version: number; hash: string; createdAt: Date } | undefined> {
  const { rows } = await pool.query(
    `SELECT v.document_id, d.doc_type, v.version, v.sha256, v.created_at FROM document_versions v JOIN documents d ON d.id = v.document_id WHERE v.chain_tx_id = $1`,
    [outboxTxId],
  );
  const row = rows[0];
  return (
    row && {
      documentId: row.document_id,
      docType: row.doc_type,
      version: Number(row.version),
      hash: row.sha256,
      createdAt: asDate(row.created_at),
    }
  );
}
