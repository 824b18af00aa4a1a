/**
 * What a webhook receives for a platform event: which subscription names an event type is delivered under, and
 * the payload of each name. Set B names get the specification's shape; set A names get ours (docs/decisions.md).
 */
import { z } from "zod/v4";
import { SET_A_EVENTS, SET_B_EVENTS, type WebhookEvent } from "./events.ts";

/** Platform event types (the `events` table), derived from confirmed transactions. */
export type PlatformEventType =
  | "APPROVAL_REQUIRED" // a stage became pending for the department (submission, stage advance, its turn, resubmission)
  | "STAGE_OVERDUE" // the stage's timeout passed with NOTIFY: a reminder to the departments still pending
  | "ESCALATED" // the stage was escalated to an administrator (rejection or timeout)
  | "DOCUMENT_UPDATED" // a new document version invalidated the department's approval
  | "REQUEST_APPROVED"
  | "CERTIFICATE_ISSUED"
  | "REQUEST_REJECTED"
  | "CHANGES_REQUESTED"
  | "CERTIFICATE_REVOKED";

/** Subscription names each event type is delivered under. */
export const NAMES_OF: Record<PlatformEventType, readonly WebhookEvent[]> = {
  APPROVAL_REQUIRED: ["APPROVAL_REQUIRED", "application.submitted"],
  STAGE_OVERDUE: ["APPROVAL_REQUIRED"],
  ESCALATED: ["APPROVAL_REQUIRED"],
  DOCUMENT_UPDATED: ["DOCUMENT_UPDATED"],
  REQUEST_APPROVED: ["REQUEST_APPROVED", "application.approved"],
  CERTIFICATE_ISSUED: ["certificate.issued"],
  REQUEST_REJECTED: ["REQUEST_REJECTED", "application.rejected"],
  CHANGES_REQUESTED: ["CHANGES_REQUESTED", "application.returned"],
  CERTIFICATE_REVOKED: ["certificate.revoked"],
};

/** Why an APPROVAL_REQUIRED delivery was sent (`data.reason`), for the event types that share the name. */
const REASON_OF: Partial<Record<PlatformEventType, string>> = {
  STAGE_OVERDUE: "STAGE_OVERDUE",
  ESCALATED: "ESCALATED",
};

export interface PlatformEvent {
  id: string;
  type: PlatformEventType;
  requestId: string;
  requestNumber: string;
  requestType: string;
  applicantId: string;
  tokenId: string;
  departments: string[];
  data: Record<string, unknown>;
  transactionHash: string;
  occurredAt: Date;
}

const isSetB = (name: string) => (SET_B_EVENTS as readonly string[]).includes(name);

/** The id receivers de-duplicate on: one per (event, name), the same at every retry. */
export const deliveryIdOf = (eventId: string, name: WebhookEvent) =>
  isSetB(name) ? `evt_${eventId}.${name}` : `evt_${eventId}`;

export function payloadOf(
  event: PlatformEvent,
  name: WebhookEvent,
  webhookDepartment: string | null,
): Record<string, unknown> {
  const timestamp = event.occurredAt.toISOString();
  if (isSetB(name)) {
    return {
      event: name,
      timestamp,
      data: { applicationId: event.requestId, licenseType: event.requestType, applicantId: event.applicantId },
    };
  }
  const reason = REASON_OF[event.type];
  return {
    eventId: deliveryIdOf(event.id, name),
    type: name,
    timestamp,
    requestId: event.requestId,
    requestNumber: event.requestNumber,
    requestType: event.requestType,
    tokenId: Number(event.tokenId),
    // The department the event is for: the one that must act, or the receiving department (null: administrators).
    departmentCode: event.departments.length === 1 ? event.departments[0] : webhookDepartment,
    data: { ...event.data, ...(reason ? { reason } : {}), departments: event.departments },
    transactionHash: event.transactionHash,
  };
}

/** The set A payload (ours; docs/decisions.md). Also served in the OpenAPI document's `webhooks`. */
export const WebhookPayloadA = z
  .object({
    eventId: z
      .string()
      .describe("Stable across retries; also the webhook-id header. De-duplicate on it: delivery is at least once"),
    type: z.enum(SET_A_EVENTS),
    timestamp: z.iso.datetime({ offset: true }).describe("When it happened on chain (block time)"),
    requestId: z.uuid(),
    requestNumber: z.string(),
    requestType: z.string(),
    tokenId: z.int(),
    departmentCode: z
      .string()
      .nullable()
      .describe(
        "The department that must act, or the receiving department; null for administrators' webhooks when several departments are concerned",
      ),
    data: z
      .object({
        departments: z.array(z.string()).describe("Departments the event concerns (empty: administrators only)"),
        reason: z
          .string()
          .optional()
          .describe(
            "APPROVAL_REQUIRED: SUBMITTED, RESUBMITTED, STAGE_ADVANCED, TURN, STAGE_REOPENED, RETURNED_BY_ADMINISTRATOR, STAGE_OVERDUE (timeout NOTIFY) or ESCALATED (administrators)",
          ),
        stage: z
          .object({
            number: z.int().describe("The stage's number, from 1: its stageOrder in the workflow"),
            name: z.string().nullable(),
          })
          .optional(),
        status: z.string().optional().describe("Licence status after the change"),
        reasonCode: z.int().optional(),
        document: z
          .object({ documentId: z.uuid(), documentType: z.string(), version: z.int(), sha256: z.string() })
          .optional()
          .describe("DOCUMENT_UPDATED: the new version (version 1: a document added under review)"),
        invalidatedApprovals: z
          .array(z.string())
          .optional()
          .describe("DOCUMENT_UPDATED: departments that must review again"),
        cause: z.enum(["TIMEOUT", "REJECTION"]).optional().describe("ESCALATED"),
      })
      .loose(),
    transactionHash: z.string().describe("The transaction that caused it"),
  })
  .meta({ id: "WebhookPayloadA", unusedIO: "output" }); // documented as sent (openapi.ts)

/** The set B payload: exactly the specification's shape. */
export const WebhookPayloadB = z
  .object({
    event: z.enum(SET_B_EVENTS),
    timestamp: z.iso.datetime({ offset: true }),
    data: z.object({
      applicationId: z.string().describe("The request id"),
      licenseType: z.string(),
      applicantId: z.string(),
    }),
  })
  .meta({ id: "WebhookPayloadB", unusedIO: "output" });

const TRIGGERS: Record<WebhookEvent, string> = {
  APPROVAL_REQUIRED:
    "A stage became pending for the department: at submission, when a stage advances, at its turn in a SEQUENTIAL stage, at resubmission; also a reminder when a stage with onTimeout NOTIFY is overdue, and (administrators) an escalation",
  DOCUMENT_UPDATED:
    "A new version of a document the department reviewed, or a document added under review (which reopens every stage's approvals), invalidated its approval, in whatever stage it was given: it must review again",
  REQUEST_APPROVED: "The request is fully approved (the licence is issued)",
  REQUEST_REJECTED:
    "The request is rejected (by a department, an administrator upholding an escalation, or a stage timeout with AUTO_REJECT)",
  CHANGES_REQUESTED:
    "A department asked the applicant for changes (or a rejection with RETRY_STAGE sent the request back)",
  "application.submitted": "Same trigger as APPROVAL_REQUIRED at submission and stage advance",
  "application.approved": "The request is fully approved",
  "application.rejected": "The request is rejected",
  "application.returned": "Returned to the applicant for corrections",
  "certificate.issued": "The licence was issued (at final approval)",
  "certificate.revoked": "The licence was revoked",
};

/** The OpenAPI document's `webhooks` entries: one per event name. */
export const webhookDocs = () =>
  [...SET_A_EVENTS, ...SET_B_EVENTS].map((name) => ({
    name,
    summary: TRIGGERS[name],
    schema: isSetB(name) ? WebhookPayloadB : WebhookPayloadA,
  }));
