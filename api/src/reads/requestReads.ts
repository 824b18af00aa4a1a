/**
 * Licence requests as the API shows them: off-chain data (app.requests) joined with the chain's state as indexed
 * (index.licences, index.request_progress). A request exists for readers once its token is on chain and indexed.
 */
import type pg from "pg";
import { asDate } from "../db/readTogether.ts";
import { notFound } from "../domain/errors.ts";
import { dateFromUnixSeconds, type UnixSeconds } from "../encoding/unixTime.ts";
import type { ApprovalRegistryPhaseName } from "../../../abis/index.ts";

export interface RequestView {
  id: string;
  requestNumber: string;
  tokenId: bigint;
  requestType: string;
  applicantId: string;
  applicantName: string;
  applicantEmail: string;
  applicantAddress: string;
  metadata: Record<string, unknown>;
  createdBy: string;
  createdAt: Date;
  updatedAt: Date;
  status: string;
  chainWorkflowId: number;
  stage: number | null;
  /** The review phase as the index names it (abis/enums.ts), null before submission. */
  phase: ApprovalRegistryPhaseName | null;
  submittedAt: Date | null;
  issuedAt: Date | null;
  expiresAt: Date | null;
  creationTxHash: string;
}

/** Chain times in the index: 0 (and no row) mean "not yet". */
const secondsToDate = (value: unknown) =>
  value === null || value === undefined || Number(value) === 0 ? null : dateFromUnixSeconds(value as UnixSeconds);

/** EXPIRED is never stored: an APPROVED licence whose expiry has passed. */
export const EFFECTIVE_STATUS_SQL = `CASE WHEN l.status = 'APPROVED' AND l.expires_at > 0 AND l.expires_at <= extract(epoch FROM now()) THEN 'EXPIRED' ELSE l.status END`;

export const REQUEST_SELECT = `
  SELECT r.id, r.request_number, r.token_id, r.request_type, r.applicant_id, r.applicant_name, r.applicant_email,
         r.applicant_address, r.metadata, r.created_by, r.created_at,
         greatest(r.updated_at, to_timestamp(l.updated_at)) AS updated_at,
         ${EFFECTIVE_STATUS_SQL} AS status,
         l.workflow_id AS chain_workflow_id, l.issued_at, l.expires_at, l.created_tx,
         p.stage, p.phase, p.submitted_at
  FROM requests r
  JOIN index.licences l ON l.token_id = r.token_id
  LEFT JOIN index.request_progress p ON p.token_id = r.token_id`;

/**
 * The current stage's name of a row `q` of REQUEST_SELECT, from the pinned workflow's stored definition: the one
 * expression behind every request list (GET /requests, GET /requests/pending), so they show the same stage.
 */
export const STAGE_NAME_SQL = `w.stages -> q.stage ->> 'stageName' AS stage_name`;
export const STAGE_NAME_JOIN = `LEFT JOIN index.workflows iw ON iw.workflow_id = q.chain_workflow_id
            LEFT JOIN workflows w ON w.definition_hash = iw.definition_hash`;

/** A request as the lists show it (RequestListItem): the stage's name while under review, else "". */
export function toRequestListItem(row: Record<string, any>) {
  const view = toRequestView(row);
  const inReview = view.phase !== null && view.phase !== "CLOSED";
  return {
    requestId: view.id,
    requestNumber: view.requestNumber,
    requestType: view.requestType,
    status: view.status,
    applicantName: view.applicantName,
    currentStage: inReview ? ((row.stage_name as string | null) ?? "") : "",
    createdAt: view.createdAt.toISOString(),
    updatedAt: view.updatedAt.toISOString(),
  };
}

export function toRequestView(row: Record<string, any>): RequestView {
  return {
    id: row.id,
    requestNumber: row.request_number,
    tokenId: BigInt(row.token_id),
    requestType: row.request_type,
    applicantId: row.applicant_id,
    applicantName: row.applicant_name ?? row.applicant_id,
    applicantEmail: row.applicant_email ?? "",
    applicantAddress: row.applicant_address,
    metadata: row.metadata ?? {},
    createdBy: row.created_by,
    createdAt: asDate(row.created_at),
    updatedAt: asDate(row.updated_at),
    status: row.status,
    chainWorkflowId: Number(row.chain_workflow_id),
    stage: row.stage === null || row.stage === undefined ? null : Number(row.stage),
    phase: row.phase ?? null,
    submittedAt: secondsToDate(row.submitted_at),
    issuedAt: secondsToDate(row.issued_at),
    expiresAt: secondsToDate(row.expires_at),
    creationTxHash: row.created_tx,
  };
}

export async function findRequest(pool: pg.Pool, id: string): Promise<RequestView | undefined> {
  const { rows } = await pool.query(`${REQUEST_SELECT} WHERE r.id = $1`, [id]);
  return rows[0] ? toRequestView(rows[0]) : undefined;
}

export async function findRequestByToken(pool: pg.Pool, tokenId: bigint): Promise<RequestView | undefined> {
  const { rows } = await pool.query(`${REQUEST_SELECT} WHERE r.token_id = $1`, [tokenId.toString()]);
  return rows[0] ? toRequestView(rows[0]) : undefined;
}

/** Codes of departments by on-chain id. */
export async function departmentCodes(pool: pg.Pool, ids: number[]): Promise<Map<number, string>> {
  if (ids.length === 0) return new Map();
  const { rows } = await pool.query(`SELECT department_id, code FROM index.departments WHERE department_id = ANY($1)`, [
    ids,
  ]);
  return new Map(rows.map((r) => [Number(r.department_id), r.code as string]));
}

/** The request whose mint is the recorded transaction `outboxTxId` (its row is written in the same transaction). */
/** The request a recorded write belongs to (its outbox record's request), as readers see it now. */
export async function requestOfWrite(pool: pg.Pool, write: { requestId: string | null }): Promise<RequestView> {
  const request = write.requestId ? await findRequest(pool, write.requestId) : undefined;
  if (!request) throw notFound("Request");
  return request;
}

export async function requestCreatedBy(
  pool: pg.Pool,
  outboxTxId: string,
): Promise<{ requestId: string; requestNumber: string; createdAt: string }> {
  const { rows } = await pool.query(`SELECT id, request_number, created_at FROM requests WHERE chain_tx_id = $1`, [
    outboxTxId,
  ]);
  if (!rows[0]) throw new Error(`recorded mint ${outboxTxId} has no request row`);
  return { requestId: rows[0].id, requestNumber: rows[0].request_number, createdAt: rows[0].created_at.toISOString() };
}
