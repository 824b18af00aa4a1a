/**
 * Delivery signatures. Every delivery carries:
 * - X-Webhook-Signature: sha256=<lowercase hex HMAC-SHA256 of the exact body, keyed with the registered secret>
 * - the Standard Webhooks headers webhook-id (the event id), webhook-timestamp and webhook-signature
 *   (v1,<base64 HMAC-SHA256 of "id.timestamp.body">), keyed with the UTF-8 bytes of the registered secret, or with
 *   its base64 part when the secret has the whsec_ form — so common receiver libraries verify it.
 * Signed at each attempt: same id, fresh timestamp.
 */
import { createHmac } from "node:crypto";

export function standardWebhooksKey(secret: string): Buffer {
  return secret.startsWith("whsec_") ? Buffer.from(secret.slice(6), "base64") : Buffer.from(secret, "utf8");
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
