/** Document routes: multipart uploads (type by magic bytes, SHA-256 while streaming), reads, signed downloads. */
import path from "node:path";
import type { Principal } from "../auth/principal.ts";
import { z } from "zod/v4";
import type { DomainContext } from "../domain/context.ts";
import {
  checkUploadAllowed,
  updateDocument,
  uploadAnswer,
  uploadDocument,
  versionAnswer,
  type ReceivedFile,
} from "../domain/documents/uploadDocument.ts";
import { notFound, validationFailed } from "../domain/errors.ts";
import { fingerprint, type MinedWrite } from "../http/idempotency.ts";
import { routeGroup, type HandlerInput, type RouteDefinition } from "../http/routeTable.ts";
import {
  documentJson,
  documentsOfRequest,
  findDocument,
  versionRecordedBy,
  type DocumentView,
} from "../reads/documentReads.ts";
import { findRequest } from "../reads/requestReads.ts";
import { canSee, findVisibleRequest } from "../domain/access.ts";
import {
  DocumentDetailResponse,
  DocumentResponse,
  DocumentSchema,
  DocumentUpdateResponse,
  DownloadResponse,
  UpdateForm,
  UploadForm,
} from "./schemas/document.ts";
import { activeContentByVersion } from "../reads/versionFindings.ts";
import { acceptUpload } from "../storage/acceptUpload.ts";
import { discardRest, parseUpload } from "../storage/multipartUpload.ts";

const route = routeGroup({ tags: ["Documents"], responses: { 401: "Not authenticated" } });

const DOWNLOAD_URL_SECONDS = 3600;
type UploadParams = { requestId: string; documentId?: string };

const UPLOADERS = [{ kind: "applicant" as const }, { kind: "client" as const, scope: "documents:write" as const }];
const READERS = [
  { kind: "applicant" as const },
  { kind: "client" as const, scope: "documents:read" as const },
  { kind: "apiKey" as const },
];

export function documentRoutes(context: DomainContext): RouteDefinition[] {
  const tmpDir = path.join(context.config.dataDir, "tmp", "uploads");

  /**
   * Takes an upload. First whether it can be taken (the caller's right to the request and document, the request's
   * status, the budgets), checked BEFORE a byte of the body is read: a refused upload makes the API stream, scan and
   * store nothing; what the client still sends is drained, bounded, while the answer goes out. Then parses the
   * multipart body, checks the file's content and runs `use` under the Idempotency-Key; always cleans up.
   */
  async function upload<T>(
    { ctx, params, principal, idempotently, idempotencyKeyUsed }: HandlerInput<UploadParams, unknown, unknown>,
    use: (file: ReceivedFile, fields: Record<string, string>) => Promise<T>,
  ) {
    try {
      const retry = await idempotencyKeyUsed();
      await checkUploadAllowed(context, principal!, params.requestId, params.documentId, { retry });
    } catch (error) {
      discardRest(ctx.req, ctx.res);
      throw error;
    }
    const upload = await parseUpload(ctx.req, { response: ctx.res, maxBytes: context.config.maxUploadBytes, tmpDir });
    try {
      const file: ReceivedFile = await acceptUpload(upload.file, { refuseActivePdf: context.config.refuseActivePdf });
      // The body was streamed, not kept: its fields (in order) and the file's SHA-256 stand for it.
      const print = fingerprint(
        ctx.method,
        ctx.originalUrl,
        JSON.stringify({ fields: upload.fields, name: upload.file.originalFilename, sha256: upload.file.sha256 }),
      );
      return await idempotently(print, async () => ({ body: await use(file, upload.fields) }));
    } finally {
      await upload.cleanup();
    }
  }

  /** The version a recorded anchoring wrote (same database transaction as its outbox record). */
  const recordedVersion = async (write: MinedWrite) => {
    const version = await versionRecordedBy(context.pool, write.outboxTxId);
    if (!version) throw notFound("Document version");
    return version;
  };

  const visibleDocument = async (documentId: string, principal: Principal | undefined): Promise<DocumentView> => {
    const document = await findDocument(context.pool, documentId);
    const request = document && (await findRequest(context.pool, document.requestId));
    if (!document || !request || !(await canSee(context.pool, principal, request, "documents:read")))
      throw notFound("Document");
    return document;
  };

  const downloadName = (document: DocumentView, version: DocumentView["current"]) =>
    `${document.docType.toLowerCase()}-v${version.version}${path.extname(version.storageKey)}`;

  return [
    route.post("/requests/:requestId/documents", "uploadDocument", {
      sendsTransactions: true,
      summary: "Upload a document (PDF, JPEG or PNG, at most 10 MB); its SHA-256 is anchored on chain",
      description:
        "multipart/form-data with `file`, `docType` (a document type the request's workflow requires) and optional `description`. The type is decided by the file's bytes, never by its name or Content-Type; a file whose name or Content-Type claims another type is refused as disguised. One document per type: upload new versions with PUT. Accepted while the request is DRAFT, SUBMITTED or PENDING_RESUBMISSION; the caller's right, the request's status and the budgets are checked before the body is read. The versions uploaded to one applicant's requests in any 24 hours are budgeted (DOCUMENT_VERSIONS_PER_DAY, default 200, and DOCUMENT_BYTES_PER_DAY, default 500 MiB): beyond, 429 DOCUMENT_BUDGET_EXCEEDED with Retry-After. Honours Idempotency-Key (same key, same file and fields).",
      access: UPLOADERS,
      params: z.object({ requestId: z.uuid() }),
      body: UploadForm,
      bodyType: "multipart",
      responses: {
        201: { description: "Stored and anchored", schema: DocumentResponse },
        400: "INVALID_FILE (empty, not PDF/JPEG/PNG, disguised) or INVALID_DOCUMENT_TYPE",
        404: "No such request",
        409: "DOCUMENT_EXISTS, DUPLICATE_DOCUMENT, INVALID_STATE",
        413: "PAYLOAD_TOO_LARGE: file over 10 MB",
        429: "DOCUMENT_BUDGET_EXCEEDED: the applicant's daily budget of document versions or bytes is used (details.budget, details.limit, details.retryAfterSeconds)",
      },
      handler: (input) =>
        upload(input, (file, fields) => {
          if (!fields.docType)
            throw validationFailed("Invalid body: docType is required", {
              issues: [{ in: "body", path: "docType", message: "Required" }],
            });
          const form = { docType: fields.docType, description: fields.description };
          return uploadDocument(context, input.principal!, input.params.requestId, file, form, input.meta);
        }),
      recoverIdempotent: async (_input, write) => ({ body: uploadAnswer(await recordedVersion(write), write.tx.hash) }),
    }),
    route.put("/requests/:requestId/documents/:documentId", "updateDocument", {
      sendsTransactions: true,
      summary: "Upload a new version of a document; approvals that reviewed the old version must be given again",
      description:
        "Stores the new version, anchors its hash on chain as the document's next version and, in the same transaction, invalidates every approval that reviewed an older version (their departments are listed in invalidatedApprovals and must review again). Refused (409) once the request is approved, rejected or cancelled, before the body is read. A document has at most DOCUMENT_VERSIONS_PER_DOCUMENT versions (default 20; beyond, 409 DOCUMENT_BUDGET_EXCEEDED), and new versions count towards the applicant's daily budgets like first uploads (429 DOCUMENT_BUDGET_EXCEEDED). Honours Idempotency-Key.",
      access: UPLOADERS,
      params: z.object({ requestId: z.uuid(), documentId: z.uuid() }),
      body: UpdateForm,
      bodyType: "multipart",
      responses: {
        200: { description: "New version anchored", schema: DocumentUpdateResponse },
        400: "INVALID_FILE",
        404: "No such request or document",
        409: "INVALID_STATE, DUPLICATE_DOCUMENT, CONCURRENT_UPDATE, DOCUMENT_BUDGET_EXCEEDED (the document has all the versions it may have)",
        413: "PAYLOAD_TOO_LARGE",
        429: "DOCUMENT_BUDGET_EXCEEDED: the applicant's daily budget of document versions or bytes is used (details.budget, details.limit, details.retryAfterSeconds)",
      },
      handler: (input) =>
        upload(input, (file, { description }) => {
          const { requestId, documentId } = input.params;
          return updateDocument(context, input.principal!, requestId, documentId, file, { description }, input.meta);
        }),
      recoverIdempotent: async (_input, write) => ({
        body: await versionAnswer(context, await recordedVersion(write), write.tx),
      }),
    }),
    route.get("/requests/:requestId/documents", "listRequestDocuments", {
      summary: "The request's documents with their current version",
      access: READERS,
      params: z.object({ requestId: z.uuid() }),
      responses: {
        200: {
          description: "Documents",
          schema: z.object({ requestId: z.string(), documents: z.array(DocumentSchema) }),
        },
        404: "No such request",
      },
      handler: async ({ params, principal }) => {
        const request = await findVisibleRequest(context.pool, principal, params.requestId, "documents:read");
        return {
          body: {
            requestId: request.id,
            documents: (await documentsOfRequest(context.pool, request.id)).map(documentJson),
          },
        };
      },
    }),
    route.get("/documents/:documentId", "getDocument", {
      summary: "A document with all its versions and a signed download URL of the current one",
      access: READERS,
      params: z.object({ documentId: z.uuid() }),
      responses: { 200: { description: "Document", schema: DocumentDetailResponse }, 404: "No such document" },
      handler: async ({ params, principal }) => {
        const document = await visibleDocument(params.documentId, principal);
        // What each version's bytes carry: reviewers see it before they open the file.
        const findings = await activeContentByVersion(context.pool, document.id);
        const { url } = await context.documentStore.signedUrl(
          document.current.storageKey,
          DOWNLOAD_URL_SECONDS,
          downloadName(document, document.current),
        );
        return {
          body: {
            documentId: document.id,
            docType: document.docType,
            originalFilename: document.current.originalFilename,
            currentVersion: document.current.version,
            currentHash: document.current.hash,
            versions: document.versions.map((v) => ({
              activeContent: findings.get(v.version) ?? [],
              version: v.version,
              hash: v.hash,
              fileSize: v.fileSize,
              mimeType: v.mimeType,
              uploadedBy: v.uploadedBy,
              transactionHash: v.transactionHash,
              createdAt: v.createdAt.toISOString(),
            })),
            downloadUrl: url,
          },
        };
      },
    }),
    route.get("/documents/:documentId/download", "downloadDocument", {
      summary: "A signed URL to download a version (default: the latest), valid for 1 hour",
      access: READERS,
      params: z.object({ documentId: z.uuid() }),
      query: z.object({
        version: z.coerce.number().int().min(1).optional().describe("Version number; default latest"),
      }),
      responses: { 200: { description: "Signed URL", schema: DownloadResponse }, 404: "No such document or version" },
      handler: async ({ params, query, principal }) => {
        const document = await visibleDocument(params.documentId, principal);
        const version =
          query.version === undefined ? document.current : document.versions.find((v) => v.version === query.version);
        if (!version) throw notFound("Document version");
        const { url, expiresAt } = await context.documentStore.signedUrl(
          version.storageKey,
          DOWNLOAD_URL_SECONDS,
          downloadName(document, version),
        );
        return { body: { downloadUrl: url, expiresAt: expiresAt.toISOString() } };
      },
    }),
  ];
}
