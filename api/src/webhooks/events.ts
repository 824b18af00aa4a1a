/** Event names a webhook can subscribe to: the spec's two sets, both accepted (docs/decisions.md). */
export const SET_A_EVENTS = [
  "APPROVAL_REQUIRED",
  "DOCUMENT_UPDATED",
  "REQUEST_APPROVED",
  "REQUEST_REJECTED",
  "CHANGES_REQUESTED",
] as const;
export const SET_B_EVENTS = [
  "application.submitted",
  "application.approved",
  "application.rejected",
  "application.returned",
  "certificate.issued",
  "certificate.revoked",
] as const;
export const WEBHOOK_EVENTS = [...SET_A_EVENTS, ...SET_B_EVENTS] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];
