/**
 * Verifying a document by its SHA-256. A file may be anchored in several requests (applicants reuse a certificate,
 * a blank form is everyone's), once in each: the answer is one record. Asked about one licence (`tokenId`, as a
 * verifier holding the licence does), it is that licence's; otherwise the index picks the record that says most
 * about the file's standing, in this order: on an issued licence, the document's latest version, a licence that
 * is APPROVED (not suspended or revoked), the earliest anchored. Whichever it is, its facts come from the chain
 * (DocumentRegistry.anchorOf for the version and whether it is the latest, the token's validity); the index and
 * the API's rows add the transaction, the request and the document type. Only one record is ever shown, so the
 * answer never links one applicant's request to another's.
 */
import { anchorOf, validityOf } from "../../chain/contractReads.ts";
import { bytes16ToUuid } from "../../chain/contracts.ts";
import { isRevert, REVERT_ANSWERS } from "../revertMapping.ts";
import { AppError, validationFailed } from "../errors.ts";
import { isoFromUnixSeconds } from "../../encoding/unixTime.ts";
import { anchoredDocumentRecord, preferredTokenOfHash } from "../../reads/verificationReads.ts";
import { ISSUED_VERDICTS, type VerificationDependencies } from "./licenceVerification.ts";
import { documentMessage, VERDICT_OF_VALIDITY, type DocumentVerdict } from "./verdicts.ts";

export interface DocumentVerification {
  isValid: boolean;
  isLatest: boolean;
  verdict: DocumentVerdict;
  message: string;
  documentId: string;
  requestId: string | null;
  tokenId: number;
  docType: string | null;
  version: number;
  uploadedAt: string;
  blockchainRecord: { transactionHash: string | null; blockNumber: number; timestamp: string; contractAddress: string };
}

/** A SHA-256 in hex, with or without 0x, in any case → 0x + 64 lower-case hex digits; otherwise 400. */
export function normaliseHash(raw: string): `0x${string}` {
  const hex = raw.trim().replace(/^0x/i, "");
  if (!/^[0-9a-fA-F]{64}$/.test(hex))
    throw validationFailed("A document hash is 64 hexadecimal digits (SHA-256), with or without 0x", {
      hash: raw.slice(0, 100),
    });
  return `0x${hex.toLowerCase()}`;
}

export async function verifyDocument(
  deps: VerificationDependencies,
  rawHash: string,
  /** The licence to check the file against; without it, the preferred record. */
  askedTokenId?: bigint,
): Promise<DocumentVerification> {
  const hash = normaliseHash(rawHash);
  // The verification page reads the verdict from details.
  const unknown = () => {
    const { status, code, message } = REVERT_ANSWERS.DocumentUnknownHash;
    return new AppError(status, code, message, { hash, verdict: "UNKNOWN" });
  };
  const tokenId = askedTokenId ?? (await preferredTokenOfHash(deps.pool, hash));
  if (tokenId === undefined) throw unknown();
  let anchor: Awaited<ReturnType<typeof anchorOf>>[0];
  let isLatest: boolean;
  try {
    [anchor, isLatest] = await anchorOf(deps.gateway, deps.contracts.DocumentRegistry, BigInt(tokenId), hash);
  } catch (error) {
    if (isRevert(error, "DocumentUnknownHash")) throw unknown();
    throw error;
  }
  const documentId = bytes16ToUuid(anchor.documentId);
  const [record, [validity]] = await Promise.all([
    anchoredDocumentRecord(deps.pool, {
      tokenId: String(anchor.tokenId),
      docIndex: Number(anchor.docIndex),
      documentId,
      hash,
    }),
    validityOf(deps.gateway, deps.contracts.LicenceToken, BigInt(anchor.tokenId)),
  ]);
  // The request behind a document is named only once its licence is issued (a file must not lead to a draft's applicant).
  const issued = ISSUED_VERDICTS.has(VERDICT_OF_VALIDITY[validity]);
  const verdict: DocumentVerdict = isLatest ? "VALID" : "SUPERSEDED";
  const uploadedAt = isoFromUnixSeconds(anchor.timestamp);
  return {
    isValid: isLatest,
    isLatest,
    verdict,
    message: documentMessage(verdict, Number(anchor.version)),
    documentId,
    requestId: issued ? record.requestId : null,
    tokenId: Number(anchor.tokenId),
    docType: record.docType,
    version: Number(anchor.version),
    uploadedAt,
    blockchainRecord: {
      transactionHash: record.transactionHash,
      blockNumber: Number(anchor.blockNumber),
      timestamp: uploadedAt,
      contractAddress: deps.contracts.DocumentRegistry,
    },
  };
}
