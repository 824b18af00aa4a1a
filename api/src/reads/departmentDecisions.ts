/**
 * A department's past decisions for the console's history, newest first, searchable: every DecisionRecorded of the
 * department (from the index, with who signed and under which custody), its remarks and reason (kept off chain),
 * and, for a decision a passkey account signed, the reviewers whose passkeys signed it (the console's signing
 * request relayed in that transaction).
 */
import type pg from "pg";
import { stageNumber } from "../../../abis/index.ts";
import { readTogether } from "../db/readTogether.ts";
import { isoFromUnixSeconds } from "../encoding/unixTime.ts";

export interface DecisionsQuery {
  /** Words matched, case-insensitively, against the request number, type, applicant, decision, reason, remarks and transaction hash. */
  q?: string;
  page: number;
  limit: number;
}

/** How the console names who held the key that signed. */
const CUSTODY_LABELS = {
  CUSTODIAL: "Signed by the platform's custodial key for the department",
  DEPARTMENT_HELD: "Signed by the department's own key",
  PASSKEY: "Signed by the department's reviewers' passkeys",
} as const;

const likePattern = (word: string) => `%${word.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

export async function departmentDecisions(pool: pg.Pool, code: string, baseUrl: string, query: DecisionsQuery) {
  const params: unknown[] = [code];
  // Every word must match somewhere (so "approved RL-2026" narrows rather than widens).
  const words = (query.q ?? "").trim().split(/\s+/).filter(Boolean).slice(0, 8);
  const conditions = words.map((word) => {
    const p = `$${params.push(likePattern(word))}`;
    return `(r.request_number ILIKE ${p} OR r.request_type ILIKE ${p} OR r.applicant_name ILIKE ${p}
             OR a.decision ILIKE ${p} OR dr.reason ILIKE ${p} OR dr.remarks ILIKE ${p} OR a.tx_hash ILIKE ${p})`;
  });
  const from = `FROM index.approvals a
    JOIN index.departments d ON d.department_id = a.department_id AND d.code = $1
    JOIN requests r ON r.token_id = a.token_id
    LEFT JOIN decision_remarks dr ON dr.tx_hash = a.tx_hash
    ${conditions.length ? `WHERE ${conditions.join(" AND ")}` : ""}`;
  const countParams = [...params];
  params.push(query.limit, (query.page - 1) * query.limit);
  const { rows, total } = await readTogether(pool, {
    rows: {
      sql: `SELECT a.id, a.token_id, a.stage, a.decision, a.status, a.is_active, a.invalidation_reason, a.signer,
                   a.custody, a.tx_hash, a.block_number, a.timestamp, r.id AS request_id, r.request_number,
                   r.request_type, r.applicant_name, dr.remarks, dr.reason,
                   EXISTS (SELECT 1 FROM passkey_accounts pa WHERE pa.address = lower(a.signer)) AS passkey,
                   (SELECT json_agg(json_build_object('reviewerId', rv.id, 'reviewerName', rv.name,
                                    'passkeyId', sra.passkey_id, 'signedAt', sra.signed_at) ORDER BY sra.signed_at)
                      FROM chain_transactions ct
                      JOIN signing_requests sr ON sr.chain_tx_id = ct.id
                      JOIN signing_request_assertions sra ON sra.signing_request_id = sr.id
                      JOIN reviewers rv ON rv.id = sra.reviewer_id
                     WHERE ct.tx_hash = a.tx_hash) AS reviewers
            ${from}
            ORDER BY a.block_number DESC, a.log_index DESC
            LIMIT $${params.length - 1} OFFSET $${params.length}`,
      params,
    },
    total: { sql: `SELECT count(*)::int AS n ${from}`, params: countParams },
  });
  const count = Number(total[0]?.n ?? 0);
  return {
    decisions: rows.map((row) => ({
      requestId: row.request_id,
      requestNumber: row.request_number,
      requestType: row.request_type,
      applicantName: row.applicant_name ?? "",
      stage: stageNumber(row.stage),
      decision: row.decision,
      /** The decision as it stands now (REVIEW_REQUIRED once a newer document version reopened it). */
      status: row.status,
      isActive: row.is_active,
      reason: row.reason ?? null,
      remarks: row.remarks ?? "",
      signer: row.signer,
      custody: row.custody,
      custodyLabel:
        CUSTODY_LABELS[row.passkey ? "PASSKEY" : (row.custody as "CUSTODIAL" | "DEPARTMENT_HELD")] ?? row.custody,
      reviewers: ((row.reviewers ?? []) as Record<string, string>[]).map((r) => ({
        reviewerId: r.reviewerId,
        reviewerName: r.reviewerName,
        passkeyId: r.passkeyId,
        signedAt: new Date(r.signedAt).toISOString(),
      })),
      transactionHash: row.tx_hash,
      blockNumber: Number(row.block_number),
      decidedAt: isoFromUnixSeconds(row.timestamp),
      verifyUrl: `${baseUrl}/verify?token=${row.token_id}`,
    })),
    pagination: { page: query.page, limit: query.limit, total: count, totalPages: Math.ceil(count / query.limit) },
  };
}
