/**
 * Document uploads. The file is stored immutably under its own key, its SHA-256 (computed while streaming) is
 * anchored on chain, and the document rows are written in the same database transaction as the outbox record.
 * If anchoring fails for good, the stored file is deleted and nothing is visible; the call can be repeated. (A
 * transaction that was recorded, timed out here and later reverted on chain is cleaned up by the discard-files job.)
 */
import { randomUUID } from "node:crypto";
import type { Principal } from "../../auth/principal.ts";
import { audited, type AuditEntry, type RequestMeta } from "../../stores/auditLog.ts";
import { ContractRevertError } from "../../chain/chainErrors.ts";
import { wasRecorded, type ConfirmedTx } from "../../chain/chainGateway.ts";
import { documentRegistryCall, hexBytes } from "../../chain/contractCalls.ts";
import { approvalRegistry, eventsOf, uuidToBytes16 } from "../../chain/contracts.ts";
import { type Hex, stringToBytes32 } from "../../../../abis/index.ts";
import { apiErrorOf, REVERT_ANSWERS } from "../revertMapping.ts";
import { AppError, conflict, notFound } from "../errors.ts";
import { documentsOfRequest, findDocument } from "../../reads/documentReads.ts";
import { departmentCodes, type RequestView } from "../../reads/requestReads.ts";
import { documentVersionKey } from "../../storage/keys.ts";
import { insertDocument, insertDocumentVersion, type NewDocument } from "../../stores/documentRecords.ts";
import type { DomainContext } from "../context.ts";
import { invalidState, loadOwnRequest, pinnedWorkflow } from "../requests/requestGuards.ts";
import { requiredDocumentTypes } from "../workflows/compileWorkflow.ts";
import { checkUploadBudget, uploadBudgetOf } from "./uploadBudget.ts";

/** A received file: already on local disk (temp), hashed while it streamed in, its type checked by magic bytes. */
export interface ReceivedFile {
  path: string;
  size: number;
  sha256: string; // hex, no 0x
  originalFilename: string;
  mimeType: string;
  /** Extension of the type detected from the bytes ("pdf", "png", "jpg"). */
  extension: string;
  /** Active content found in a PDF (JAVASCRIPT, LAUNCH_ACTION, …), stored with the version. */
  activeContent?: string[];
}

const EDITABLE = new Set(["DRAFT", "SUBMITTED", "PENDING_RESUBMISSION"]);

function checkEditable(request: RequestView): void {
  if (!EDITABLE.has(request.status)) throw invalidState(request, "change the documents of");
}

/**
 * Whether an upload to this request (a new version of `documentId` when given) can be taken, judged from what is
 * known before its body: the caller may act on the request (404 otherwise), the document is the request's (404),
 * the request's status takes uploads (409 INVALID_STATE), and the budgets are not used up (DOCUMENT_BUDGET_EXCEEDED).
 * The route asks this before reading a byte of the body; the upload itself checks everything again. A `retry` (an
 * Idempotency-Key used before) is checked for the caller's right only: its first answer is replayed once its body is
 * read, even if that upload spent the last of a budget or the request has moved on since.
 */
export async function checkUploadAllowed(
  context: DomainContext,
  principal: Principal,
  requestId: string,
  documentId?: string,
  options: { retry?: boolean } = {},
): Promise<void> {
  const request = await loadOwnRequest(context, principal, requestId, "documents:write");
  let version = 1;
  if (documentId) {
    const document = await findDocument(context.pool, documentId);
    if (!document || document.requestId !== request.id) throw notFound("Document");
    version = document.current.version + 1;
  }
  if (options.retry) return;
  checkEditable(request);
  await checkUploadBudget(
    context.pool,
    uploadBudgetOf(context.config),
    request.applicantId,
    { version },
    { lock: false },
  );
}

/** One version of a document to store and anchor: the file, and the DocumentRegistry call that anchors its hash. */
interface VersionToAnchor {
  request: RequestView;
  principal: Principal;
  meta: RequestMeta;
  documentId: string;
  version: number;
  file: ReceivedFile;
  description: string | null;
  /** Encoded DocumentRegistry call (anchorDocument for a first version, anchorVersion after). */
  anchorCall: string;
  /** A first version records its document too, before the version. */
  newDocument?: NewDocument;
  /** The audit record of the change (its transaction hash is added). */
  audit: Omit<AuditEntry, "txHash">;
}

/**
 * The one way a version lands: store the file under its own key, anchor its hash on chain, and record the rows and
 * the audit in the outbox record's database transaction. On a failure that can no longer land, the stored file is
 * deleted; contract errors become API errors.
 */
async function storeAndAnchorVersion(
  context: DomainContext,
  version: VersionToAnchor,
): Promise<{ tx: ConfirmedTx; hash: string; createdAt: Date }> {
  const { request, file } = version;
  const hash = `0x${file.sha256}`; // as the anchor call has it
  const key = documentVersionKey(request.id, version.documentId, version.version, file.extension);
  const budget = uploadBudgetOf(context.config);
  const next = { version: version.version, fileSize: file.size };
  // A version that cannot fit is refused before it is stored or simulated; the exact check is the one below.
  await checkUploadBudget(context.pool, budget, request.applicantId, next, { lock: false });
  await context.documentStore.put(key, file.path, file.mimeType);
  let createdAt = new Date();
  try {
    const tx = await context.gateway.send(
      {
        kind: "DOC_UPDATE",
        from: context.operator,
        to: context.contracts.DocumentRegistry,
        data: version.anchorCall,
        requestId: request.id,
      },
      audited(version.meta, version.audit, async (client, recorded) => {
        // Counted and recorded in one database transaction under the applicant's lock: parallel uploads cannot
        // pass the budget together. A refusal here rolls back the outbox record (nothing is sent).
        await checkUploadBudget(client, budget, request.applicantId, next, { lock: true });
        if (version.newDocument) await insertDocument(client, version.newDocument);
        createdAt = await insertDocumentVersion(client, {
          documentId: version.documentId,
          version: version.version,
          sha256: hash,
          fileSize: file.size,
          mimeType: file.mimeType,
          originalFilename: file.originalFilename,
          storageKey: key,
          description: version.description,
          uploadedBy: `${version.principal.kind}:${version.principal.id}`,
          chainTxId: recorded.id,
          activeContent: file.activeContent ?? [],
        });
      }),
    );
    return { tx, hash, createdAt };
  } catch (error) {
    if (!wasRecorded(error))
      await context.documentStore
        .delete(key)
        .catch((e) => context.logger.error({ err: e, key }, "could not delete an unanchored file"));
    if (error instanceof ContractRevertError) throw apiErrorOf(error);
    if ((error as { code?: string }).code === "23505")
      throw conflict("CONCURRENT_UPDATE", REVERT_ANSWERS.DocumentNotLatestVersion.message);
    throw error;
  }
}

export async function uploadDocument(
  context: DomainContext,
  principal: Principal,
  requestId: string,
  file: ReceivedFile,
  fields: { docType: string; description?: string },
  meta: RequestMeta = { principal },
) {
  const request = await loadOwnRequest(context, principal, requestId, "documents:write");
  checkEditable(request);
  const workflow = await pinnedWorkflow(context, request);
  const allowed = requiredDocumentTypes(workflow.stages);
  if (!allowed.includes(fields.docType)) {
    throw new AppError(
      400,
      "INVALID_DOCUMENT_TYPE",
      `Document type ${fields.docType} is not used by this request's workflow`,
      { allowedDocumentTypes: allowed },
    );
  }
  const existing = (await documentsOfRequest(context.pool, request.id)).find((d) => d.docType === fields.docType);
  if (existing) {
    throw conflict("DOCUMENT_EXISTS", `A ${fields.docType} document already exists: upload a new version with PUT`, {
      documentId: existing.id,
    });
  }

  const documentId = randomUUID();
  const hash: Hex = `0x${file.sha256}`;
  const description = fields.description ?? null;
  const anchored = await storeAndAnchorVersion(context, {
    request,
    principal,
    meta,
    documentId,
    version: 1,
    file,
    description,
    anchorCall: documentRegistryCall("anchorDocument", [
      request.tokenId,
      uuidToBytes16(documentId),
      stringToBytes32(fields.docType),
      hash,
    ]),
    newDocument: {
      id: documentId,
      requestId: request.id,
      docType: fields.docType,
      originalFilename: file.originalFilename,
      description,
    },
    audit: {
      entityType: "DOCUMENT",
      entityId: documentId,
      action: "UPLOAD",
      newValue: {
        requestId: request.id,
        docType: fields.docType,
        version: 1,
        hash,
        fileSize: file.size,
        mimeType: file.mimeType,
      },
    },
  });
  return uploadAnswer(
    { documentId, docType: fields.docType, hash, version: 1, createdAt: anchored.createdAt },
    anchored.tx.hash,
  );
}

/** An anchored version as the answers name it (from the rows recorded with its transaction, after a crash). */
export interface AnchoredVersion {
  documentId: string;
  docType: string;
  hash: string;
  version: number;
  createdAt: Date;
}

/** The answer to a document's first upload once anchored (also to a retry whose process died after recording it). */
export function uploadAnswer(anchored: AnchoredVersion, transactionHash: string) {
  const { documentId, docType, hash, version, createdAt } = anchored;
  return { documentId, docType, hash, version, transactionHash, createdAt: createdAt.toISOString() };
}

export async function updateDocument(
  context: DomainContext,
  principal: Principal,
  requestId: string,
  documentId: string,
  file: ReceivedFile,
  fields: { description?: string },
  meta: RequestMeta = { principal },
) {
  const request = await loadOwnRequest(context, principal, requestId, "documents:write");
  const document = await findDocument(context.pool, documentId);
  if (!document || document.requestId !== request.id) throw notFound("Document");
  checkEditable(request);

  const version = document.current.version + 1;
  const hash: Hex = `0x${file.sha256}`;
  const { tx } = await storeAndAnchorVersion(context, {
    request,
    principal,
    meta,
    documentId,
    version,
    file,
    description: fields.description ?? null,
    anchorCall: documentRegistryCall("anchorVersion", [request.tokenId, hexBytes(document.current.hash), hash]),
    audit: {
      entityType: "DOCUMENT",
      entityId: documentId,
      action: "NEW_VERSION",
      oldValue: { version: document.current.version, hash: document.current.hash },
      newValue: { version, hash, fileSize: file.size, mimeType: file.mimeType },
    },
  });
  return versionAnswer(context, { documentId, version, hash }, tx);
}

/**
 * The answer to a new version once anchored, with the approvals it invalidated on chain in the same transaction
 * (from its receipt; also what a retry whose process died after recording it is answered with).
 */
export async function versionAnswer(
  context: DomainContext,
  anchored: Pick<AnchoredVersion, "documentId" | "version" | "hash">,
  tx: ConfirmedTx,
) {
  const invalidated = eventsOf(
    tx.receipt.logs,
    approvalRegistry,
    context.contracts.ApprovalRegistry,
    "ReviewInvalidated",
  );
  const codes = await departmentCodes(
    context.pool,
    invalidated.map((e) => Number(e.args.departmentId)),
  );
  return {
    documentId: anchored.documentId,
    newVersion: anchored.version,
    newHash: anchored.hash,
    invalidatedApprovals: [
      ...new Set(invalidated.map((e) => codes.get(Number(e.args.departmentId)) ?? String(e.args.departmentId))),
    ],
    transactionHash: tx.hash,
  };
}
