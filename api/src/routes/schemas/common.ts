/** Schemas shared by several resources. */
import { z } from "zod/v4";
import { APPROVAL_STATUSES, REQUEST_STATUSES } from "./contractNames.ts";

export { APPROVAL_STATUSES, REQUEST_STATUSES };

export const REQUEST_TYPES = ["RESORT_LICENSE", "TRADE_LICENSE", "BUILDING_PERMIT"] as const;
export const RequestType = z.enum(REQUEST_TYPES).meta({ id: "RequestType" });

/** Stored statuses (the licence token's) plus EXPIRED, which is APPROVED past its expiry (contractNames.ts). */
export const RequestStatus = z
  .enum(REQUEST_STATUSES)
  .meta({ id: "RequestStatus", description: "EXPIRED is APPROVED past expiresAt (computed, never stored)." });

export const ApprovalStatus = z.enum(APPROVAL_STATUSES).meta({ id: "ApprovalStatus" });

export const Pagination = z
  .object({
    page: z.int().min(1),
    limit: z.int().min(1),
    total: z.int().min(0),
    totalPages: z.int().min(0),
  })
  .meta({
    id: "Pagination",
    description: "page and limit as requested; total items matching; totalPages = ceil(total / limit).",
  });

export const Uuid = z.uuid();
/**
 * RFC 3339 `date-time` (§5.6), strictly: a real calendar date, `T`, hours:minutes:seconds (seconds required),
 * an optional fraction, then `Z` or a `±hh:mm` offset. Upper-case `T` and `Z` only; no leap second 60.
 * (docs/decisions.md, "API document").
 */
export const RFC3339_DATE_TIME =
  /^(?:(?:\d\d[2468][048]|\d\d[13579][26]|\d\d0[48]|[02468][048]00|[13579][26]00)-02-29|\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\d|30)|02-(?:0[1-9]|1\d|2[0-8])))T(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d+)?(?:Z|[+-](?:[01]\d|2[0-3]):[0-5]\d)$/;
export const DateTime = z
  .string()
  .regex(RFC3339_DATE_TIME, {
    message: "must be an RFC 3339 date-time with seconds and an offset, e.g. 2020-02-29T00:00:00Z",
  })
  .meta({ format: "date-time" });

/**
 * The last page a list serves. Pages are cut with OFFSET, which reads and skips every earlier row: without a bound
 * one request could make the database walk the whole table (page=10^15). Beyond it, narrow the list with filters.
 */
export const MAX_PAGE = 10_000;

/** page/limit query parameters with the spec's defaults and bounds. */
export function pageQuery(defaultLimit: number, maxLimit = 100) {
  return {
    page: z.coerce.number().int().min(1).max(MAX_PAGE).default(1).describe(`Page number, 1..${MAX_PAGE}`),
    limit: z.coerce.number().int().min(1).max(maxLimit).default(defaultLimit).describe(`Page size, 1..${maxLimit}`),
  };
}

export const TimelineEventType = z
  .enum([
    "REQUEST_CREATED",
    "NFT_MINTED",
    "DOCUMENT_UPLOADED",
    "DOCUMENT_UPDATED",
    "REQUEST_SUBMITTED",
    "REQUEST_RESUBMITTED",
    "APPROVAL_RECEIVED",
    "REJECTION_RECEIVED",
    "CHANGES_REQUESTED",
    "APPROVAL_INVALIDATED",
    "STAGE_COMPLETED",
    "STAGE_REOPENED",
    "STAGE_TIMED_OUT",
    "STAGE_ESCALATED",
    "ESCALATION_RESOLVED",
    "REQUEST_APPROVED",
    "REQUEST_REJECTED",
    "REQUEST_CANCELLED",
    "LICENCE_SUSPENDED",
    "LICENCE_REINSTATED",
    "LICENCE_REVOKED",
  ])
  .meta({
    id: "TimelineEventType",
    description: "The spec's ten event types, plus the other lifecycle events the chain records.",
  });

export const TimelineEvent = z
  .object({
    eventId: Uuid,
    eventType: TimelineEventType,
    description: z.string(),
    actor: z.object({ type: z.enum(["APPLICANT", "DEPARTMENT", "SYSTEM", "ADMIN"]), id: z.string(), name: z.string() }),
    metadata: z
      .record(z.string(), z.unknown())
      .describe("The event's details; stages (stage, fromStage, toStage) are numbered from 1, as their stageOrder"),
    transactionHash: z.string().nullable(),
    timestamp: DateTime,
  })
  .meta({ id: "TimelineEvent" });

/** 202: governance, whose key the API does not hold, must execute the change. */
export const AwaitingGovernanceResponse = z
  .object({
    status: z.literal("AWAITING_GOVERNANCE"),
    message: z.string(),
    transaction: z
      .object({ to: z.string(), data: z.string(), value: z.literal("0"), chainId: z.number() })
      .meta({ description: "The call for governance (DEFAULT_ADMIN_ROLE, e.g. a Safe's owners) to execute" }),
  })
  .meta({ id: "AwaitingGovernance" });
