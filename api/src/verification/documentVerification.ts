/**
 * Verifying a document by its SHA-256: the chain's DocumentRegistry.anchorOf says whether the hash is anchored,
 * which version it is and whether it is the latest; the index and the API's rows add the transaction, the request
 * and the document type.
 */
import { anchorOf, validityOf } from "../chain/contractReads.ts";
import { bytes16ToUuid } from "../chain/contracts.ts";
import { isRevert, REVERT_ANSWERS } from "../revertMapping.ts";
import { AppError, validationFailed } from "../errors.ts";
import { isoFromUnixSeconds } from "../unixTime.ts";
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

export async function verifyDocument(deps: VerificationDependencies, rawHash: string): Promise<DocumentVerification> {
  const hash = normaliseHash(rawHash);
  let anchor: Awaited<ReturnType<typeof anchorOf>>[0];
  let isLatest: boolean;
  try {
    [anchor, isLatest] = await anchorOf(deps.gateway, deps.contracts.DocumentRegistry, hash);
  } catch (error) {
    // The verification page reads the verdict from details.
    if (isRevert(error, "DocumentUnknownHash")) {
      const { status, code, message } = REVERT_ANSWERS.DocumentUnknownHash;
      throw new AppError(status, code, message, { hash, verdict: "UNKNOWN" });
    }
    throw error;
  }
  const documentId = bytes16ToUuid(anchor.documentId);
  const [document, version, [validity]] = await Promise.all([
    deps.pool.query(`SELECT request_id, doc_type FROM documents WHERE id = $1`, [documentId]),
    deps.pool.query(`SELECT tx_hash FROM index.document_versions WHERE sha256_hash = $1`, [hash]),
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
    requestId: issued ? (document.rows[0]?.request_id ?? null) : null,
    tokenId: Number(anchor.tokenId),
    docType: document.rows[0]?.doc_type ?? null,
    version: Number(anchor.version),
    uploadedAt,
    blockchainRecord: {
      transactionHash: version.rows[0]?.tx_hash ?? null,
      blockNumber: Number(anchor.blockNumber),
      timestamp: uploadedAt,
      contractAddress: deps.contracts.DocumentRegistry,
    },
  };
}
