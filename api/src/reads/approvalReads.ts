/**
 * Department decisions as the API shows them (the spec's Approval), from the index: every decision recorded on
 * chain, including those a document update invalidated (isActive false, status REVIEW_REQUIRED).
 */
import type pg from "pg";
import { readTogether, type ReadPart, type Rows } from "../db/readTogether.ts";
import { publicInvalidationReason } from "../routes/schemas/contractNames.ts";
import { isoFromUnixSeconds } from "../encoding/unixTime.ts";
import { stableUuid } from "./stableId.ts";

export interface ApprovalJson {
  approvalId: string;
  departmentCode: string;
  departmentName: string;
  status: string;
  remarks: string;
  reviewedDocuments: string[];
  isActive: boolean;
  transactionHash: string;
  createdAt: string;
  invalidatedAt: string | null;
  invalidationReason: string | null;
  stage: number;
}

/** The decisions of a token (`approvals`) and the token's documents by index (`approvalDocuments`), to read together. */
export function approvalParts(
  tokenId: bigint,
  includeInvalidated: boolean,
): { approvals: ReadPart; approvalDocuments: ReadPart } {
  return {
    approvals: {
      sql: `SELECT a.id, a.status, a.stage, a.reviewed_mask, a.is_active, a.invalidated_at, a.invalidation_reason, a.tx_hash, a.timestamp,
                   d.code, a.department_id, r.remarks, ad.name AS department_name
            FROM index.approvals a LEFT JOIN index.departments d ON d.department_id = a.department_id
            LEFT JOIN departments ad ON ad.code = d.code
            LEFT JOIN decision_remarks r ON r.tx_hash = a.tx_hash
            WHERE a.token_id = $1 ${includeInvalidated ? "" : "AND a.is_active"}
            ORDER BY a.block_number, a.log_index`,
      params: [tokenId.toString()],
    },
    approvalDocuments: {
      sql: `SELECT doc_index, document_id FROM index.documents WHERE token_id = $1`,
      params: [tokenId.toString()],
    },
  };
}

export async function approvalsOfToken(
  pool: pg.Pool,
  tokenId: bigint,
  includeInvalidated: boolean,
): Promise<ApprovalJson[]> {
  const rows = await readTogether(pool, approvalParts(tokenId, includeInvalidated));
  return approvalsFromRows(rows.approvals, rows.approvalDocuments);
}

export function approvalsFromRows(rows: Rows, documentRows: Rows): ApprovalJson[] {
  const documentAt = new Map(documentRows.map((r) => [Number(r.doc_index), r.document_id as string]));
  return rows.map((row) => {
    const mask = Number(row.reviewed_mask);
    const reviewed = [...Array(16).keys()].filter((i) => (mask >> i) & 1).map((i) => documentAt.get(i) ?? `index-${i}`);
    return {
      approvalId: stableUuid(`approval:${row.id}`),
      departmentCode: row.code ?? String(row.department_id),
      departmentName: row.department_name ?? row.code ?? String(row.department_id),
      status: row.status,
      remarks: row.remarks ?? "",
      reviewedDocuments: reviewed,
      isActive: row.is_active,
      transactionHash: row.tx_hash,
      createdAt: isoFromUnixSeconds(row.timestamp),
      invalidatedAt: row.invalidated_at == null ? null : isoFromUnixSeconds(row.invalidated_at),
      invalidationReason: row.invalidation_reason == null ? null : publicInvalidationReason(row.invalidation_reason),
      stage: Number(row.stage),
    };
  });
}
