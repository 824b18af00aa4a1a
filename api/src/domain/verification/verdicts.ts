/** The verdicts a verification answers with, and what they mean in plain words (for the page and for programs). */
import { VALIDITY_NAMES } from "../../chain/contracts.ts";

export const LICENCE_VERDICTS = [
  "VALID",
  "NOT_ISSUED",
  "EXPIRED",
  "SUSPENDED",
  "REVOKED",
  "INVALID_QR",
  "INVALID_CREDENTIAL",
  "UNKNOWN",
] as const;
export type LicenceVerdict = (typeof LICENCE_VERDICTS)[number];

export const DOCUMENT_VERDICTS = ["VALID", "SUPERSEDED"] as const;
export type DocumentVerdict = (typeof DOCUMENT_VERDICTS)[number];

/** The contract's Validity enum by value (abis/enums.ts): each of its names is a verdict. */
export const VERDICT_OF_VALIDITY: readonly LicenceVerdict[] = VALIDITY_NAMES;

const day = (date: Date | null) => (date ? date.toISOString().slice(0, 10) : "");

export function licenceMessage(
  verdict: LicenceVerdict,
  facts: { issuedAt?: Date | null; expiresAt?: Date | null; status?: string } = {},
): string {
  switch (verdict) {
    case "VALID":
      return `This licence is valid. It was issued on ${day(facts.issuedAt ?? null)}${facts.expiresAt ? ` and is valid until ${day(facts.expiresAt)}` : " and does not expire"}, as recorded on the blockchain.`;
    case "NOT_ISSUED":
      return `This licence has not been issued: the request is ${String(facts.status ?? "not approved")
        .toLowerCase()
        .replaceAll("_", " ")}.`;
    case "EXPIRED":
      return `This licence is no longer valid: it expired on ${day(facts.expiresAt ?? null)}.`;
    case "SUSPENDED":
      return "This licence is suspended: it is not valid while the suspension lasts.";
    case "REVOKED":
      return "This licence has been revoked: it is no longer valid.";
    case "INVALID_QR":
      return "This QR code was not issued by the licence platform, or it has been altered. Do not rely on it.";
    case "INVALID_CREDENTIAL":
      return "This credential cannot be relied on.";
    case "UNKNOWN":
      return "No licence with this number exists.";
  }
}

export function documentMessage(verdict: DocumentVerdict, version: number): string {
  return verdict === "VALID"
    ? `This document is genuine: it is version ${version}, the current version, as recorded on the blockchain.`
    : `This document is genuine but out of date: it is version ${version}, and a newer version has been recorded since.`;
}
