/**
 * Applicants' custodial addresses (docs/decisions.md): private key = HMAC-SHA256(custody secret,
 * "licence-approval/applicant/v1:" + applicantId), re-hashed in the negligible case it is not a valid secp256k1
 * scalar; the token is minted to that key's address. Deterministic, and a real key exists for a later hand-over.
 */
import { createHmac } from "node:crypto";
import { SigningKey, computeAddress } from "ethers";

const ORDER = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

export function applicantAddress(custodySecret: string, applicantId: string): string {
  const secret = Buffer.from(custodySecret.replace(/^0x/, ""), "hex");
  let digest = createHmac("sha256", secret).update(`licence-approval/applicant/v1:${applicantId}`).digest();
  for (;;) {
    const scalar = BigInt(`0x${digest.toString("hex")}`);
    if (scalar > 0n && scalar < ORDER) return computeAddress(new SigningKey(`0x${digest.toString("hex")}`).publicKey);
    digest = createHmac("sha256", secret).update(digest).digest();
  }
}

/** Addresses remembered per process: deriving one is an elliptic-curve multiplication (≈ 0.5 ms in JavaScript). */
const REMEMBERED = 10_000;

/** What use cases get: the applicant's address, never the custody secret. */
export function applicantAddresses(custodySecret: string): (applicantId: string) => string {
  const known = new Map<string, string>();
  return (applicantId) => {
    let address = known.get(applicantId);
    if (address === undefined) {
      address = applicantAddress(custodySecret, applicantId);
      if (known.size >= REMEMBERED) known.delete(known.keys().next().value!);
      known.set(applicantId, address);
    }
    return address;
  };
}
