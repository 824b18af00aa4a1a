/**
 * Passkey custody's rows: departments' passkey accounts, signing requests and the reviewers' assertions they
 * collect, and the reviewers' passkeys as signing needs them (migration 033_reviewers.sql).
 */
import type { Db, Tx } from "../db/queryable.ts";
import { insertRow } from "./insertRow.ts";

export type SigningKind = "DECISION" | "KEY_PROOF" | "REVIEWER_CHANGE";
export type SigningStatus = "COLLECTING" | "SUBMITTED" | "FAILED" | "EXPIRED";

/** A reviewer's passkey with what signing checks: whose it is, whether either was removed. */
export interface ReviewerPasskey {
  id: string;
  reviewerId: string;
  reviewerName: string;
  departmentCode: string;
  deviceName: string;
  publicKey: string;
  cosePublicKey: Uint8Array;
  signCount: number;
  transports: string[];
  /** Neither the passkey nor its reviewer was removed. */
  active: boolean;
}

const PASSKEY_SELECT = `
  SELECT p.id, p.reviewer_id, r.name AS reviewer_name, r.department_code, p.device_name, p.p256_key, p.cose_public_key,
         p.sign_count, p.transports, (p.removed_at IS NULL AND r.removed_at IS NULL) AS active
  FROM reviewer_passkeys p JOIN reviewers r ON r.id = p.reviewer_id`;

const toPasskey = (row: Record<string, any>): ReviewerPasskey => ({
  id: row.id,
  reviewerId: row.reviewer_id,
  reviewerName: row.reviewer_name,
  departmentCode: row.department_code,
  deviceName: row.device_name,
  publicKey: String(row.p256_key).toLowerCase(),
  cosePublicKey: new Uint8Array(row.cose_public_key),
  signCount: Number(row.sign_count),
  transports: row.transports ?? [],
  active: row.active,
});

/** Every active passkey of the department's active reviewers, oldest first. */
export async function activeDepartmentPasskeys(db: Db, departmentCode: string): Promise<ReviewerPasskey[]> {
  const { rows } = await db.query(
    `${PASSKEY_SELECT} WHERE r.department_code = $1 AND p.removed_at IS NULL AND r.removed_at IS NULL
     ORDER BY p.created_at, p.id`,
    [departmentCode],
  );
  return rows.map(toPasskey);
}

/** Passkeys by credential id (removed ones too: a removal names them). */
export async function passkeysByIds(db: Db, ids: string[]): Promise<ReviewerPasskey[]> {
  const { rows } = await db.query(`${PASSKEY_SELECT} WHERE p.id = ANY($1::text[])`, [ids]);
  return rows.map(toPasskey);
}

/** Passkeys by their 64-byte key (0x, lower case). */
export async function passkeysByKeys(db: Db, keys: string[]): Promise<ReviewerPasskey[]> {
  const { rows } = await db.query(`${PASSKEY_SELECT} WHERE lower(p.p256_key) = ANY($1::text[])`, [
    keys.map((k) => k.toLowerCase()),
  ]);
  return rows.map(toPasskey);
}

/** The counter a verified assertion reported (a later one must be higher) and when the passkey was last used. */
export async function recordPasskeyUse(client: Tx, passkeyId: string, signCount: number): Promise<void> {
  await client.query(
    `UPDATE reviewer_passkeys SET sign_count = GREATEST(sign_count, $2), last_used_at = now() WHERE id = $1`,
    [passkeyId, signCount],
  );
}

export interface PasskeyAccountRow {
  address: string;
  departmentCode: string;
  threshold: number;
  chainTxId: string;
  createdAt: Date;
}

export async function insertPasskeyAccount(
  client: Tx,
  account: { address: string; departmentCode: string; threshold: number; chainTxId: string },
): Promise<void> {
  await insertRow(client, "passkey_accounts", { ...account, address: account.address.toLowerCase() });
}

/** The department's passkey accounts, newest first. */
export async function passkeyAccountsOf(db: Db, departmentCode: string): Promise<PasskeyAccountRow[]> {
  const { rows } = await db.query(
    `SELECT address, department_code, threshold, chain_tx_id, created_at FROM passkey_accounts
     WHERE department_code = $1 ORDER BY created_at DESC`,
    [departmentCode],
  );
  return rows.map((row) => ({
    address: row.address,
    departmentCode: row.department_code,
    threshold: row.threshold,
    chainTxId: row.chain_tx_id,
    createdAt: row.created_at,
  }));
}

export interface SignatureRow {
  passkeyId: string;
  reviewerId: string;
  reviewerName: string;
  publicKey: string;
  assertion: Record<string, unknown>;
  signedAt: Date;
}

export interface SigningRequestRow {
  id: string;
  departmentCode: string;
  accountAddress: string;
  kind: SigningKind;
  requestId: string | null;
  digest: string;
  payload: Record<string, any>;
  threshold: number;
  /** As stored: a COLLECTING request past its expiry is EXPIRED to readers (signingRequestStatus). */
  status: SigningStatus;
  createdBy: string | null;
  createdAt: Date;
  expiresAt: Date;
  transactionHash: string | null;
  failure: Record<string, unknown> | null;
  signatures: SignatureRow[];
}

/** What a reader sees: a request still collecting after its expiry is EXPIRED. */
export const signingRequestStatus = (row: Pick<SigningRequestRow, "status" | "expiresAt">): SigningStatus =>
  row.status === "COLLECTING" && row.expiresAt.getTime() <= Date.now() ? "EXPIRED" : row.status;

export async function insertSigningRequest(
  client: Db,
  request: {
    id: string;
    departmentCode: string;
    accountAddress: string;
    kind: SigningKind;
    requestId?: string;
    digest: string;
    payload: Record<string, unknown>;
    threshold: number;
    createdBy?: string;
    expiresAt: Date;
  },
): Promise<void> {
  await insertRow(client, "signing_requests", {
    id: request.id,
    departmentCode: request.departmentCode,
    accountAddress: request.accountAddress.toLowerCase(),
    kind: request.kind,
    requestId: request.requestId ?? null,
    digest: request.digest,
    payload: JSON.stringify(request.payload),
    threshold: request.threshold,
    status: "COLLECTING",
    createdBy: request.createdBy ?? null,
    expiresAt: request.expiresAt,
  });
}

const REQUEST_SELECT = `
  SELECT s.*, t.tx_hash FROM signing_requests s LEFT JOIN chain_transactions t ON t.id = s.chain_tx_id`;

async function withSignatures(db: Db, rows: Record<string, any>[]): Promise<SigningRequestRow[]> {
  if (rows.length === 0) return [];
  const { rows: signed } = await db.query(
    `SELECT a.signing_request_id, a.passkey_id, a.reviewer_id, r.name AS reviewer_name, p.p256_key, a.assertion,
            a.signed_at
     FROM signing_request_assertions a JOIN reviewers r ON r.id = a.reviewer_id
       JOIN reviewer_passkeys p ON p.id = a.passkey_id
     WHERE a.signing_request_id = ANY($1::uuid[]) ORDER BY a.signed_at, a.passkey_id`,
    [rows.map((r) => r.id)],
  );
  return rows.map((row) => ({
    id: row.id,
    departmentCode: row.department_code,
    accountAddress: row.account_address,
    kind: row.kind,
    requestId: row.request_id,
    digest: row.digest,
    payload: row.payload,
    threshold: row.threshold,
    status: row.status,
    createdBy: row.created_by,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    transactionHash: row.tx_hash ?? null,
    failure: row.failure,
    signatures: signed
      .filter((s) => s.signing_request_id === row.id)
      .map((s) => ({
        passkeyId: s.passkey_id,
        reviewerId: s.reviewer_id,
        reviewerName: s.reviewer_name,
        publicKey: String(s.p256_key).toLowerCase(),
        assertion: s.assertion,
        signedAt: s.signed_at,
      })),
  }));
}

/** One signing request with its signatures; `forUpdate` locks its row until the transaction of `db` ends. */
export async function signingRequestById(
  db: Db,
  id: string,
  options: { forUpdate?: boolean } = {},
): Promise<SigningRequestRow | undefined> {
  const { rows } = await db.query(
    options.forUpdate
      ? `SELECT s.*, NULL AS tx_hash FROM signing_requests s WHERE s.id = $1 FOR UPDATE`
      : `${REQUEST_SELECT} WHERE s.id = $1`,
    [id],
  );
  return (await withSignatures(db, rows))[0];
}

/** The department's signing requests, newest first; COLLECTING means still collecting and not expired. */
export async function signingRequestsOf(
  db: Db,
  departmentCode: string,
  filter: { status?: SigningStatus; limit: number },
): Promise<SigningRequestRow[]> {
  const where = ["s.department_code = $1"];
  const params: unknown[] = [departmentCode];
  if (filter.status === "COLLECTING") where.push(`s.status = 'COLLECTING' AND s.expires_at > now()`);
  else if (filter.status === "EXPIRED")
    where.push(`(s.status = 'EXPIRED' OR (s.status = 'COLLECTING' AND s.expires_at <= now()))`);
  else if (filter.status) where.push(`s.status = $${params.push(filter.status)}`);
  const { rows } = await db.query(
    `${REQUEST_SELECT} WHERE ${where.join(" AND ")} ORDER BY s.created_at DESC, s.id LIMIT $${params.push(filter.limit)}`,
    params,
  );
  return withSignatures(db, rows);
}

/** Whether the department has a KEY_PROOF request still collecting (a custody move under way). */
export async function hasOpenKeyProof(db: Db, departmentCode: string): Promise<boolean> {
  const { rows } = await db.query(
    `SELECT 1 FROM signing_requests WHERE department_code = $1 AND kind = 'KEY_PROOF' AND status = 'COLLECTING'
       AND expires_at > now() LIMIT 1`,
    [departmentCode],
  );
  return rows.length > 0;
}

export async function insertAssertion(
  client: Tx,
  row: { signingRequestId: string; passkeyId: string; reviewerId: string; assertion: unknown },
): Promise<void> {
  await insertRow(client, "signing_request_assertions", { ...row, assertion: JSON.stringify(row.assertion) });
}

/** The outbox record of a transaction by its hash (what a use case that sent it returns). */
export async function chainTransactionIdByHash(db: Db, hash: string): Promise<string | undefined> {
  const { rows } = await db.query(`SELECT id FROM chain_transactions WHERE tx_hash = $1`, [hash]);
  return rows[0]?.id;
}

export async function markSubmitted(
  client: Tx,
  id: string,
  outcome: { chainTxId: string | null; result?: unknown },
): Promise<void> {
  await client.query(
    `UPDATE signing_requests SET status = 'SUBMITTED', chain_tx_id = $2,
       payload = payload || jsonb_build_object('result', $3::jsonb) WHERE id = $1`,
    [id, outcome.chainTxId, JSON.stringify(outcome.result ?? null)],
  );
}

export async function markFailed(client: Tx, id: string, failure: Record<string, unknown>): Promise<void> {
  await client.query(`UPDATE signing_requests SET status = 'FAILED', failure = $2 WHERE id = $1`, [
    id,
    JSON.stringify(failure),
  ]);
}

/** A COLLECTING request past its expiry, recorded as EXPIRED when someone tries to sign it. */
export async function markExpired(client: Tx, id: string): Promise<void> {
  await client.query(`UPDATE signing_requests SET status = 'EXPIRED' WHERE id = $1 AND status = 'COLLECTING'`, [id]);
}
