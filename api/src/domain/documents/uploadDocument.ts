/**
 * Document uploads. The file is stored immutably under its own key, its SHA-256 (computed while streaming) is
 * anchored on chain, and the document rows are written in the same database transaction as the outbox record.
 * If anchoring fails for good, the stored file is deleted and nothing is visible; the call can be repeated. (A
 * transaction that was recorded, timed out here and later reverted on chain is cleaned up by the discard-files job.)
 */
import { randomUUID } from "node:crypto";
import { encodeBytes32String } from "ethers";
import type { Principal } from "../../auth/principal.ts";
import { audit, type RequestMeta } from "../../audit/auditLog.ts";
import { ContractRevertError } from "../../chain/chainErrors.ts";
import { wasRecorded } from "../../chain/chainGateway.ts";
import { approvalRegistry, documentRegistry, eventsOf, uuidToBytes16 } from "../../chain/contracts.ts";
import { apiErrorOf, REVERT_ANSWERS } from "../../chain/revertMapping.ts";
import { AppError, conflict, notFound } from "../../errors.ts";
import { documentsOfRequest, findDocument } from "../../reads/documentReads.ts";
import { departmentCodes, type RequestView } from "../../reads/requestReads.ts";
import { documentVersionKey } from "../../storage/keys.ts";
import type { DomainContext } from "../context.ts";
import { requiredDocumentTypes } from "../workflows/compileWorkflow.ts";
import { insertDocument, insertDocumentVersion } from "../../stores/documentRecords.ts";
import { invalidState, loadOwnRequest, pinnedWorkflow } from "../requests/requestGuards.ts";

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


/** Runs the anchoring; on a failure that can no longer land, deletes the stored file. Maps contract errors. */
async function anchorStored<T>(context: DomainContext, key: string, anchor: () => Promise<T>): Promise<T> {
  try {
    return await anchor();
  } catch (error) {
    if (!wasRecorded(error)) await context.documentStore.delete(key).catch((e) => context.logger.error({ err: e, key }, "could not delete an unanchored file"));
    if (error instanceof ContractRevertError) throw apiErrorOf(error);
    if ((error as { code?: string }).code === "23505") throw conflict("CONCURRENT_UPDATE", REVERT_ANSWERS.DocumentNotLatestVersion.message);
    throw error;
  }
}

async function checkEditable(request: RequestView): Promise<void> {
  if (!EDITABLE.has(request.status)) throw invalidState(request, "change the documents of");
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
  await checkEditable(request);
  const workflow = await pinnedWorkflow(context, request);
  const allowed = requiredDocumentTypes(workflow.stages);
  if (!allowed.includes(fields.docType)) {
    throw new AppError(400, "INVALID_DOCUMENT_TYPE", `Document type ${fields.docType} is not used by this request's workflow`, { allowedDocumentTypes: allowed });
  }
  const existing = (await documentsOfRequest(context.pool, request.id)).find((d) => d.docType === fields.docType);
  if (existing) {
    throw conflict("DOCUMENT_EXISTS", `A ${fields.docType} document already exists: upload a new version with PUT`, { documentId: existing.id });
  }

  const documentId = randomUUID();
  const hash = `0x${file.sha256}`;
  const key = documentVersionKey(request.id, documentId, 1, file.extension);
  await context.documentStore.put(key, file.path, file.mimeType);
  const uploadedBy = `${principal.kind}:${principal.id}`;
  let createdAt = new Date();
  const tx = await anchorStored(context, key, () =>
    context.gateway.send(
      {
        kind: "DOC_UPDATE",
        from: context.operator,
        to: context.contracts.DocumentRegistry,
        data: documentRegistry.encodeFunctionData("anchorDocument", [request.tokenId, uuidToBytes16(documentId), encodeBytes32String(fields.docType), hash]),
        requestId: request.id,
      },
      {
        onRecorded: async (client, recorded) => {
          await insertDocument(client, { id: documentId, requestId: request.id, docType: fields.docType, originalFilename: file.originalFilename, description: fields.description ?? null });
          createdAt = await insertDocumentVersion(client, {
            documentId, version: 1, sha256: hash, fileSize: file.size, mimeType: file.mimeType, originalFilename: file.originalFilename,
            storageKey: key, description: fields.description ?? null, uploadedBy, chainTxId: recorded.id, activeContent: file.activeContent ?? [],
          });
          await audit(client, meta, { entityType: "DOCUMENT", entityId: documentId, action: "UPLOAD", newValue: { requestId: request.id, docType: fields.docType, version: 1, hash, fileSize: file.size, mimeType: file.mimeType }, txHash: recorded.hash });
        },
      },
    ),
  );
  return { documentId, docType: fields.docType, hash, version: 1, transactionHash: tx.hash, createdAt: createdAt.toISOString() };
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
  await checkEditable(request);

  const version = document.current.version + 1;
  const hash = `0x${file.sha256}`;
  const key = documentVersionKey(request.id, documentId, version, file.extension);
  await context.documentStore.put(key, file.path, file.mimeType);
  const uploadedBy = `${principal.kind}:${principal.id}`;
  const tx = await anchorStored(context, key, () =>
    context.gateway.send(
      {
        kind: "DOC_UPDATE",
        from: context.operator,
        to: context.contracts.DocumentRegistry,
        data: documentRegistry.encodeFunctionData("anchorVersion", [document.current.hash, hash]),
        requestId: request.id,
      },
      {
        onRecorded: async (client, recorded) => {
          await insertDocumentVersion(client, {
            documentId, version, sha256: hash, fileSize: file.size, mimeType: file.mimeType, originalFilename: file.originalFilename,
            storageKey: key, description: fields.description ?? null, uploadedBy, chainTxId: recorded.id, activeContent: file.activeContent ?? [],
          });
          await audit(client, meta, { entityType: "DOCUMENT", entityId: documentId, action: "NEW_VERSION", oldValue: { version: document.current.version, hash: document.current.hash }, newValue: { version, hash, fileSize: file.size, mimeType: file.mimeType }, txHash: recorded.hash });
        },
      },
    ),
  );
  // The approvals this version invalidated on chain, in the same transaction.
  const invalidated = eventsOf(tx.receipt.logs, approvalRegistry, context.contracts.ApprovalRegistry, "ReviewInvalidated");
  const codes = await departmentCodes(context.pool, invalidated.map((e) => Number(e.args.departmentId)));
  return {
    documentId,
    newVersion: version,
    newHash: hash,
    invalidatedApprovals: [...new Set(invalidated.map((e) => codes.get(Number(e.args.departmentId)) ?? String(e.args.departmentId)))],
    transactionHash: tx.hash,
  };
}
