/**
 * What a licence credential and the status lists are made of, from the index: the latest anchored version of each
 * document, the standing approvals that issued the licence, and the suspended or revoked licences of one list's
 * token range.
 */
import type pg from "pg";
import { stageNumber } from "../../../abis/index.ts";
import { readTogether } from "../db/readTogether.ts";
import { isoFromUnixSeconds } from "../encoding/unixTime.ts";

export interface CredentialEvidenceRows {
  documents: { documentId: string; docType: string; version: number; sha256: string }[];
  decisions: {
    department: string;
    stage: number;
    decision: string;
    signer: string;
    time: string;
    transactionHash: string;
  }[];
}

export async function credentialEvidence(pool: pg.Pool, tokenId: bigint): Promise<CredentialEvidenceRows> {
  const token = tokenId.toString();
  const rows = await readTogether(pool, {
    documents: {
      sql: `SELECT document_id, doc_type, latest_version, latest_hash FROM index.documents WHERE token_id = $1 ORDER BY doc_index`,
      params: [token],
    },
    decisions: {
      sql: `SELECT d.code, a.department_id, a.stage, a.decision, a.signer, a.timestamp, a.tx_hash
            FROM index.approvals a LEFT JOIN index.departments d ON d.department_id = a.department_id
            WHERE a.token_id = $1 AND a.is_active AND a.decision = 'APPROVED' ORDER BY a.block_number, a.log_index`,
      params: [token],
    },
  });
  return {
    documents: rows.documents.map((r) => ({
      documentId: r.document_id,
      docType: r.doc_type,
      version: Number(r.latest_version),
      sha256: r.latest_hash,
    })),
    decisions: rows.decisions.map((r) => ({
      department: r.code ?? String(r.department_id),
      stage: stageNumber(r.stage),
      decision: r.decision,
      signer: r.signer,
      time: isoFromUnixSeconds(r.timestamp),
      transactionHash: r.tx_hash,
    })),
  };
}

/** The highest token id minted (index), or undefined before the first. */
export async function highestTokenId(pool: pg.Pool): Promise<bigint | undefined> {
  const { rows } = await pool.query(`SELECT max(token_id) AS token_id FROM index.licences`);
  return rows[0].token_id === null ? undefined : BigInt(rows[0].token_id);
}

/** The request of an offer whose code is still redeemable (not redeemed, not expired), by the code's SHA-256. */
export async function pendingCredentialOffer(
  pool: pg.Pool,
  codeHash: Buffer,
): Promise<{ requestId: string } | undefined> {
  const { rows } = await pool.query(
    `SELECT request_id FROM credential_offers WHERE code_hash = $1 AND redeemed_at IS NULL AND expires_at > now()`,
    [codeHash],
  );
  return rows[0] && { requestId: rows[0].request_id };
}

/** The request an offer (redeemed for an access token) was made for. */
export async function credentialOfferRequest(pool: pg.Pool, offerId: string): Promise<string | undefined> {
  const { rows } = await pool.query(`SELECT request_id FROM credential_offers WHERE id = $1`, [offerId]);
  return rows[0]?.request_id;
}
