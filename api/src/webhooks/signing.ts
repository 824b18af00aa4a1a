/**
 * Delivery signatures. Every delivery carries:
 * - X-Webhook-Signature: sha256=<lowercase hex HMAC-SHA256 of the exact body, keyed with the registered secret>
 * - the Standard Webhooks headers webhook-id (the event id), webhook-timestamp and webhook-signature
 *   (v1,<base64 HMAC-SHA256 of "id.timestamp.body">), keyed with the UTF-8 bytes of the registered secret, or with
 *   its base64 part when the secret has the whsec_ form — so common receiver libraries verify it.
 * Signed at each attempt: same id, fresh timestamp.
 *
 * A whsec_ secret must be canonical base64 of at least MIN_WHSEC_KEY_BYTES bytes (the Standard Webhooks range
 * starts there): Node's decoder skips what is not base64, so "whsec_!!!!…" would key the signature with nothing.
 * Registration refuses any other (whsecProblem); one stored before that rule is keyed with its UTF-8 bytes instead.
 */
import { createHmac } from "node:crypto";

export const MIN_WHSEC_KEY_BYTES = 24;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Why a whsec_ secret cannot key signatures; undefined when it can (or is not of the whsec_ form). */
export function whsecProblem(secret: string): string | undefined {
  if (!secret.startsWith("whsec_")) return undefined;
  const encoded = secret.slice(6);
  // Canonical only: padded, and unused bits zero, so one key has exactly one spelling.
  if (!BASE64.test(encoded) || Buffer.from(encoded, "base64").toString("base64") !== encoded)
    return "the part after whsec_ must be standard base64 (A-Z a-z 0-9 + /, padded with =)";
  if (Buffer.from(encoded, "base64").length < MIN_WHSEC_KEY_BYTES)
    return `the part after whsec_ must decode to at least ${MIN_WHSEC_KEY_BYTES} bytes`;
  return undefined;
}

export function standardWebhooksKey(secret: string): Buffer {
  return secret.startsWith("whsec_") && !whsecProblem(secret)
    ? Buffer.from(secret.slice(6), "base64")
    : Buffer.from(secret, "utf8");
}

export function signDelivery(secret: string, eventId: string, body: string, now = new Date()): Record<string, string> {
  const timestamp = String(Math.floor(now.getTime() / 1000));
  const hex = createHmac("sha256", Buffer.from(secret, "utf8")).update(body).digest("hex");
  const standard = createHmac("sha256", standardWebhooksKey(secret))
    .update(`${eventId}.${timestamp}.${body}`)
    .digest("base64");
  return {
    "X-Webhook-Signature": `sha256=${hex}`,
    "webhook-id": eventId,
    "webhook-timestamp": timestamp,
    "webhook-signature": `v1,${standard}`,
  };
}
