/**
 * A request's timeline: its creation (off chain) and everything the chain recorded about it, in chain order (block,
 * then log position), never by comparing clocks: the API's and the blocks' differ in precision.
 * Each event has a stable id derived from the transaction and log it comes from.
 */
import type pg from "pg";
import type { RequestView } from "./requestReads.ts";
import { readTogether, type ReadPart, type Rows } from "../db/readTogether.ts";
import { dateFromUnixSeconds, isoFromUnixSeconds } from "../encoding/unixTime.ts";
import { stableUuid } from "./stableId.ts";
import { stageNumber } from "../../../abis/index.ts";

export interface TimelineEventJson {
  eventId: string;
  eventType: string;
  description: string;
  actor: { type: "APPLICANT" | "DEPARTMENT" | "SYSTEM" | "ADMIN"; id: string; name: string };
  metadata: Record<string, unknown>;
  transactionHash: string | null;
  timestamp: string;
}

interface Ordered extends TimelineEventJson {
  order: [number, number];
}

const STATUS_EVENTS: Record<string, [string, string, "APPLICANT" | "SYSTEM" | "ADMIN"]> = {
  "DRAFT>SUBMITTED": ["REQUEST_SUBMITTED", "The request was submitted for review", "APPLICANT"],
  "PENDING_RESUBMISSION>SUBMITTED": ["REQUEST_RESUBMITTED", "The request was resubmitted after changes", "APPLICANT"],
  "SUBMITTED>APPROVED": ["REQUEST_APPROVED", "Every stage approved: the licence was issued", "SYSTEM"],
  "SUBMITTED>REJECTED": ["REQUEST_REJECTED", "The request was rejected", "SYSTEM"],
  "DRAFT>CANCELLED": ["REQUEST_CANCELLED", "The applicant cancelled the request", "APPLICANT"],
  "PENDING_RESUBMISSION>CANCELLED": ["REQUEST_CANCELLED", "The applicant cancelled the request", "APPLICANT"],
  "APPROVED>SUSPENDED": ["LICENCE_SUSPENDED", "The licence was suspended", "ADMIN"],
  "SUSPENDED>APPROVED": ["LICENCE_REINSTATED", "The licence was reinstated", "ADMIN"],
  "APPROVED>REVOKED": ["LICENCE_REVOKED", "The licence was revoked", "ADMIN"],
  "SUSPENDED>REVOKED": ["LICENCE_REVOKED", "The licence was revoked", "ADMIN"],
};

const DECISION_EVENTS: Record<string, [string, string]> = {
  APPROVED: ["APPROVAL_RECEIVED", "approved"],
  REJECTED: ["REJECTION_RECEIVED", "rejected the request"],
  CHANGES_REQUESTED: ["CHANGES_REQUESTED", "asked for changes"],
};

const STAGE_EVENTS: Record<string, string> = {
  StageCompleted: "STAGE_COMPLETED",
  StageReopened: "STAGE_REOPENED",
  StageTimedOut: "STAGE_TIMED_OUT",
  StageEscalated: "STAGE_ESCALATED",
  EscalationResolved: "ESCALATION_RESOLVED",
  ReviewInvalidated: "APPROVAL_INVALIDATED",
};

/** The reads a timeline needs, to run in one round trip (with others: see reads/requestDetail.ts). */
export function timelineParts(request: RequestView) {
  const token = request.tokenId.toString();
  return {
    licence: {
      sql: `SELECT created_block, created_tx, created_at FROM index.licences WHERE token_id = $1`,
      params: [token],
    },
    statuses: {
      sql: `SELECT id, from_status, to_status, reason_code, block_number, log_index, tx_hash, timestamp FROM index.licence_status_history WHERE token_id = $1`,
      params: [token],
    },
    versions: {
      sql: `SELECT iv.sha256_hash, iv.document_id, iv.version, iv.block_number, iv.tx_hash, iv.timestamp, d.doc_type, v.uploaded_by
            FROM index.document_versions iv
            LEFT JOIN documents d ON d.id = iv.document_id::uuid
            LEFT JOIN document_versions v ON v.document_id = d.id AND v.sha256 = iv.sha256_hash
            WHERE iv.token_id = $1`,
      params: [token],
    },
    decisions: {
      sql: `SELECT id, department_id, stage, decision, reason_code, block_number, log_index, tx_hash, timestamp FROM index.approvals WHERE token_id = $1`,
      params: [token],
    },
    stages: {
      sql: `SELECT id, stage, event_type, detail, block_number, log_index, tx_hash, timestamp FROM index.stage_events WHERE token_id = $1 AND event_type = ANY($2)`,
      params: [token, Object.keys(STAGE_EVENTS)],
    },
    departments: {
      sql: `SELECT d.department_id, d.code, ad.name FROM index.departments d LEFT JOIN departments ad ON ad.code = d.code`,
      params: [],
    },
    // Administrators (a handful): a client that recorded an event is shown as one, or as a system client.
    administrators: {
      sql: `SELECT client_id FROM oauth_clients WHERE 'admin' = ANY(scopes)`,
      params: [],
    },
  } satisfies Record<string, ReadPart>;
}

export type TimelineRows = Record<keyof ReturnType<typeof timelineParts>, Rows>;

export async function timelineOf(pool: pg.Pool, request: RequestView): Promise<TimelineEventJson[]> {
  return timelineFromRows(request, await readTogether(pool, timelineParts(request)));
}

/** Department names by code, from the timeline's `departments` rows (the code itself when it has no name). */
export const departmentNamesOf = (rows: Rows) =>
  new Map(rows.map((r) => [r.code as string, (r.name ?? r.code) as string]));

/** Every event, sorted in chain order; the creation first (it comes before its own mint). */
export function timelineFromRows(
  request: RequestView,
  { licence, statuses, versions, decisions, stages, departments, administrators }: TimelineRows,
): TimelineEventJson[] {
  const actors = actorsOf(request, departments, administrators);
  const events: Ordered[] = [
    creationEvent(request, licence[0], actors),
    ...(licence[0] ? [mintEvent(request, licence[0])] : []),
    ...versions.map((row) => documentEvent(row, actors)),
    ...statuses.flatMap((row) => statusEvent(row, actors)),
    ...decisions.map((row) => decisionEvent(row, actors)),
    ...stages.map((row) => stageEvent(row, actors)),
  ];
  // A stable sort: events of the same log keep the order above.
  events.sort((a, b) => a.order[0] - b.order[0] || a.order[1] - b.order[1]);
  return events.map(({ order: _order, ...event }) => event);
}

type Actor = TimelineEventJson["actor"];
type Row = Rows[number];

interface Actors {
  applicant: Actor;
  platform: Actor;
  /**
   * The actor of what `by` (`kind:id` of the caller) recorded, by role: the applicant, an administrator, a system
   * client or the platform. Never a client's id: the applicant sees the timeline.
   */
  recordedBy(by: string): Actor;
  department(code: string): Actor;
  /** A department's code by its on-chain id (the id itself when the index does not know it). */
  codeOf(departmentId: unknown): string;
}

const ADMINISTRATOR: Actor = { type: "ADMIN", id: "administrator", name: "Administrator" };
const SYSTEM_CLIENT: Actor = { type: "SYSTEM", id: "system-client", name: "System client" };
const PLATFORM: Actor = { type: "SYSTEM", id: "platform", name: "Licence platform" };

function actorsOf(request: RequestView, departments: Rows, administrators: Rows): Actors {
  const applicant = { type: "APPLICANT" as const, id: request.applicantId, name: request.applicantName };
  const codes = new Map(departments.map((r) => [Number(r.department_id), r.code as string]));
  const names = departmentNamesOf(departments);
  const admins = new Set(administrators.map((r) => `client:${r.client_id as string}`));
  return {
    applicant,
    platform: PLATFORM,
    recordedBy: (by) =>
      by === `applicant:${request.applicantId}`
        ? applicant
        : admins.has(by)
          ? ADMINISTRATOR
          : by.startsWith("client:")
            ? SYSTEM_CLIENT
            : PLATFORM,
    department: (code) => ({ type: "DEPARTMENT", id: code, name: names.get(code) ?? code }),
    codeOf: (departmentId) => codes.get(Number(departmentId)) ?? String(departmentId),
  };
}

/**
 * The creation is stamped by the API's clock (milliseconds), its mint by the block (whole seconds, rounded down):
 * the block's time can read earlier than the creation that caused it. The creation is never shown after its mint.
 */
function creationEvent(request: RequestView, mint: Row | undefined, actors: Actors): Ordered {
  const mintedAt = mint ? dateFromUnixSeconds(mint.created_at).getTime() : Number.POSITIVE_INFINITY;
  return {
    eventId: stableUuid(`created:${request.id}`),
    eventType: "REQUEST_CREATED",
    description: `Request ${request.requestNumber} (${request.requestType}) created`,
    actor: actors.recordedBy(request.createdBy),
    metadata: { requestNumber: request.requestNumber, requestType: request.requestType },
    transactionHash: mint?.created_tx ?? null,
    timestamp: new Date(Math.min(request.createdAt.getTime(), mintedAt)).toISOString(),
    order: [-1, -1],
  };
}

function mintEvent(request: RequestView, mint: Row): Ordered {
  return {
    eventId: stableUuid(`minted:${mint.created_tx}`),
    eventType: "NFT_MINTED",
    description: `Soulbound licence token #${request.tokenId} minted`,
    actor: { type: "SYSTEM", id: "platform", name: "Licence platform" },
    metadata: { tokenId: Number(request.tokenId), owner: request.applicantAddress },
    transactionHash: mint.created_tx,
    timestamp: isoFromUnixSeconds(mint.created_at),
    order: [Number(mint.created_block), -1],
  };
}

function documentEvent(row: Row, actors: Actors): Ordered {
  const first = Number(row.version) === 1;
  return {
    eventId: stableUuid(`document:${row.sha256_hash}`),
    eventType: first ? "DOCUMENT_UPLOADED" : "DOCUMENT_UPDATED",
    description: `${row.doc_type ?? "Document"} ${first ? "uploaded" : `updated to version ${row.version}`}`,
    actor: actors.recordedBy(row.uploaded_by ?? "platform"),
    metadata: {
      documentId: row.document_id,
      docType: row.doc_type,
      version: Number(row.version),
      hash: row.sha256_hash,
    },
    transactionHash: row.tx_hash,
    timestamp: isoFromUnixSeconds(row.timestamp),
    order: [Number(row.block_number), 0],
  };
}

/** None for a transition the timeline tells otherwise (PENDING_RESUBMISSION: the department's decision itself). */
function statusEvent(row: Row, actors: Actors): Ordered[] {
  const mapped = STATUS_EVENTS[`${row.from_status}>${row.to_status}`];
  if (!mapped) return [];
  const [eventType, description, actorType] = mapped;
  const actor: Actor =
    actorType === "APPLICANT"
      ? actors.applicant
      : { type: actorType, id: "platform", name: actorType === "ADMIN" ? "Administrator" : "Licence platform" };
  return [
    {
      eventId: stableUuid(`status:${row.id}`),
      eventType,
      description,
      actor,
      metadata: { from: row.from_status, to: row.to_status, reasonCode: Number(row.reason_code) },
      transactionHash: row.tx_hash,
      timestamp: isoFromUnixSeconds(row.timestamp),
      order: [Number(row.block_number), Number(row.log_index)],
    },
  ];
}

function decisionEvent(row: Row, actors: Actors): Ordered {
  const [eventType, verb] = DECISION_EVENTS[row.decision] ?? ["APPROVAL_RECEIVED", row.decision.toLowerCase()];
  const code = actors.codeOf(row.department_id);
  const metadata = withStageNumbers({ stage: row.stage, reasonCode: Number(row.reason_code) });
  return {
    eventId: stableUuid(`decision:${row.id}`),
    eventType,
    description: `${code} ${verb} (stage ${metadata.stage})`,
    actor: actors.department(code),
    metadata,
    transactionHash: row.tx_hash,
    timestamp: isoFromUnixSeconds(row.timestamp),
    order: [Number(row.block_number), Number(row.log_index)],
  };
}

function stageEvent(row: Row, actors: Actors): Ordered {
  const detail = row.detail ?? {};
  const code = detail.departmentId !== undefined ? actors.codeOf(detail.departmentId) : undefined;
  const metadata = withStageNumbers({ stage: row.stage, ...detail });
  return {
    eventId: stableUuid(`stage:${row.id}`),
    eventType: STAGE_EVENTS[row.event_type],
    description: describeStageEvent(row.event_type, metadata.stage as number, detail, code),
    actor: code ? actors.department(code) : actors.platform,
    metadata,
    transactionHash: row.tx_hash,
    timestamp: isoFromUnixSeconds(row.timestamp),
    order: [Number(row.block_number), Number(row.log_index)],
  };
}

/** `stage` is the stage's number (from 1). */
function describeStageEvent(type: string, stage: number, detail: Record<string, unknown>, code?: string): string {
  switch (type) {
    case "StageCompleted":
      return `Stage ${stage} completed`;
    case "StageReopened":
      return `A document update sent the review back to stage ${stage}`;
    case "StageTimedOut":
      return `Stage ${stage} is overdue (${String(detail.action ?? "")})`;
    case "StageEscalated":
      return `Stage ${stage} was escalated to an administrator`;
    case "EscalationResolved":
      return detail.rejected
        ? "An administrator upheld the rejection"
        : "An administrator sent the escalation back to the department";
    case "ReviewInvalidated":
      return `${code ?? "A department"}'s approval needs a new review after a document update`;
    default:
      return type;
  }
}

/** The stages a timeline event's metadata names (the index keeps the chain's indexes). */
const STAGE_FIELDS = ["stage", "fromStage", "toStage"];

/** The timeline's one conversion of stage indexes to stage numbers (from 1): its descriptions read them here. */
function withStageNumbers(metadata: Record<string, unknown>): Record<string, unknown> {
  const shown = { ...metadata };
  for (const field of STAGE_FIELDS)
    if (shown[field] !== undefined && shown[field] !== null) shown[field] = stageNumber(shown[field] as number);
  return shown;
}
