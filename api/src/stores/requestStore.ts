/** The API's own record of licence requests (app.requests): what the chain does not hold, written and read here. */
import type { Db } from "../db/queryable.ts";
import { insertRow } from "./insertRow.ts";

/** The next token id (a sequence: ids are never reused, even by a mint that failed). */
export async function nextTokenId(db: Db): Promise<bigint> {
  const { rows } = await db.query(`SELECT nextval('token_ids') AS id`);
  return BigInt(rows[0].id);
}

/**
 * Holds the applicant's request lock until the open transaction ends: creations of one applicant count and insert
 * one at a time, across API processes.
 */
export async function lockApplicantRequests(tx: Db, applicantId: string): Promise<void> {
  await tx.query(`SELECT pg_advisory_xact_lock(hashtextextended('requests:' || $1, 0))`, [applicantId]);
}

/** How many requests the applicant created in the last 24 hours. */
export async function requestsCreatedInLastDay(db: Db, applicantId: string): Promise<number> {
  const { rows } = await db.query(
    `SELECT count(*)::int AS n FROM requests WHERE applicant_id = $1 AND created_at > now() - interval '24 hours'`,
    [applicantId],
  );
  return rows[0].n;
}

/** The next value of the request-number counter of `prefix` in `year` (1 for the first). */
export async function nextRequestNumber(db: Db, prefix: string, year: number): Promise<number> {
  const { rows } = await db.query(
    `INSERT INTO request_number_counters (prefix, year, last) VALUES ($1, $2, 1)
     ON CONFLICT (prefix, year) DO UPDATE SET last = request_number_counters.last + 1 RETURNING last`,
    [prefix, year],
  );
  return Number(rows[0].last);
}

export interface NewRequest {
  id: string;
  requestNumber: string;
  tokenId: bigint;
  requestType: string;
  applicantId: string;
  applicantName: string | null;
  applicantEmail: string | null;
  applicantAddress: string;
  metadata: Record<string, unknown>;
  /** `kind:id` of the principal that created it. */
  createdBy: string;
  /** The outbox record of its mint. */
  chainTxId: string;
  identitySalt: string;
}

/** Records a new request; returns its creation time. */
export async function insertRequest(db: Db, request: NewRequest): Promise<Date> {
  const row = { ...request, tokenId: request.tokenId.toString(), metadata: JSON.stringify(request.metadata) };
  return (await insertRow(db, "requests", row, "created_at")).created_at;
}

/** The reason given for a cancellation (kept off chain). */
export async function recordCancelReason(db: Db, requestId: string, reason: string | null): Promise<void> {
  await db.query(`UPDATE requests SET cancel_reason = $2, updated_at = now() WHERE id = $1`, [requestId, reason]);
}

/** The salt of the request's applicant commitment; null for a request minted before commitments were recorded. */
export async function identitySaltOf(db: Db, requestId: string): Promise<string | null> {
  const { rows } = await db.query(`SELECT identity_salt FROM requests WHERE id = $1`, [requestId]);
  return rows[0]?.identity_salt ?? null;
}

/** The id of the request minted as `tokenId`, if this API created it. */
export async function requestIdOfToken(db: Db, tokenId: string): Promise<string | undefined> {
  const { rows } = await db.query(`SELECT id FROM requests WHERE token_id = $1`, [tokenId]);
  return rows[0]?.id;
}
