/**
 * Custodial addresses licences are minted to (docs/decisions.md). Each licence has an address of its own, so the
 * chain does not link one person's licences: private key = HMAC-SHA256(custody secret,
 * "licence-approval/licence/v2:" + requestId + ":" + applicantId), re-hashed in the negligible case it is not a valid
 * secp256k1 scalar. Deterministic from what the request row keeps, so a real key exists for a later hand-over.
 * Licences minted before then are owned by the applicant's one address (`applicantAddress`, v1).
 */
import { createHmac } from "node:crypto";
import { SigningKey, computeAddress } from "ethers";

const ORDER = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

/** The address of the key HMAC-SHA256(custody secret, `message`), re-hashed until it is a valid scalar. */
function derivedAddress(custodySecret: string, message: string): string {
  const secret = Buffer.from(custodySecret.replace(/^0x/, ""), "hex");
  let digest = createHmac("sha256", secret).update(message).digest();
  for (;;) {
    const scalar = BigInt(`0x${digest.toString("hex")}`);
    if (scalar > 0n && scalar < ORDER) return computeAddress(new SigningKey(`0x${digest.toString("hex")}`).publicKey);
    digest = createHmac("sha256", secret).update(digest).digest();
  }
}

/** The one address of every licence an applicant got before licences had addresses of their own (v1). */
export function applicantAddress(custodySecret: string, applicantId: string): string {
  return derivedAddress(custodySecret, `licence-approval/applicant/v1:${applicantId}`);
}

/** The address of one licence: the applicant's request `requestId` (a UUID, so the message is unambiguous). */
export function licenceAddress(custodySecret: string, applicantId: string, requestId: string): string {
  return derivedAddress(custodySecret, `licence-approval/licence/v2:${requestId}:${applicantId}`);
}

/** What use cases get: the address of an applicant's licence, never the custody secret. */
export function applicantAddresses(custodySecret: string): (applicantId: string, requestId: string) => string {
  return (applicantId, requestId) => licenceAddress(custodySecret, applicantId, requestId);
}
