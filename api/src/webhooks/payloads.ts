/**
 * What a webhook receives for a platform event: which subscription names an event type is delivered under, and
 * the payload of each name. Set B names get the specification's shape; set A names get ours (docs/decisions.md).
 */
import { SET_B_EVENTS, type WebhookEvent } from "./events.ts";

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
const REASON_OF: Partial<Record<PlatformEventType, string>> = { STAGE_OVERDUE: "STAGE_OVERDUE", ESCALATED: "ESCALATED" };

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
export const deliveryIdOf = (eventId: string, name: WebhookEvent) => (isSetB(name) ? `evt_${eventId}.${name}` : `evt_${eventId}`);

export function payloadOf(event: PlatformEvent, name: WebhookEvent, webhookDepartment: string | null): Record<string, unknown> {
  const timestamp = event.occurredAt.toISOString();
  if (isSetB(name)) {
    return { event: name, timestamp, data: { applicationId: event.requestId, licenseType: event.requestType, applicantId: event.applicantId } };
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
