/** Document resources (the spec's Document, DocumentVersion, DocumentResponse, DocumentDetailResponse). */
import { z } from "zod/v4";
import { UPLOADER_ROLES } from "../../reads/documentReads.ts";
import { PDF_FINDINGS } from "../../storage/pdfActiveContent.ts";
import { DateTime, Uuid } from "./common.ts";

export const DocumentSchema = z
  .object({
    documentId: Uuid,
    docType: z.string(),
    originalFilename: z.string(),
    currentVersion: z.int(),
    currentHash: z.string().describe("SHA-256, 0x-prefixed hex, anchored on chain"),
    uploadedAt: DateTime,
    updatedAt: DateTime,
  })
  .meta({ id: "Document" });

export const DocumentVersionSchema = z
  .object({
    version: z.int(),
    hash: z.string(),
    fileSize: z.int(),
    mimeType: z.enum(["application/pdf", "image/png", "image/jpeg"]),
    uploadedBy: z
      .enum(UPLOADER_ROLES)
      .describe(
        "Who uploaded this version, by role: the request's applicant, an administrator, a system client acting for the applicant (never a client's id)",
      ),
    transactionHash: z.string(),
    createdAt: DateTime,
    activeContent: z
      .array(z.enum(PDF_FINDINGS))
      .describe(
        "Active content found in this version's PDF (JavaScript, launch actions, embedded files, XFA, actions run on opening or on events, links, form submission, rich media): open it with care. Empty when none was found.",
      ),
  })
  .meta({ id: "DocumentVersion" });

export const DocumentResponse = z
  .object({
    documentId: Uuid,
    docType: z.string(),
    hash: z.string(),
    version: z.int(),
    transactionHash: z.string(),
    createdAt: DateTime,
  })
  .meta({ id: "DocumentResponse" });

export const DocumentDetailResponse = z
  .object({
    documentId: Uuid,
    docType: z.string(),
    originalFilename: z.string(),
    currentVersion: z.int(),
    currentHash: z.string(),
    versions: z.array(DocumentVersionSchema),
    downloadUrl: z.url().describe("Signed URL of the current version, valid for 1 hour"),
  })
  .meta({ id: "DocumentDetailResponse" });

export const DocumentUpdateResponse = z
  .object({
    documentId: z.string(),
    newVersion: z.int(),
    newHash: z.string(),
    invalidatedApprovals: z
      .array(z.string())
      .describe("Codes of the departments whose approvals this version invalidated"),
    transactionHash: z.string(),
  })
  .meta({ id: "DocumentUpdateResponse" });

export const DownloadResponse = z
  .object({ downloadUrl: z.url(), expiresAt: DateTime })
  .meta({ id: "DownloadResponse" });

/** A multipart file part: its bytes (any declared Content-Type; the type is decided by the bytes). */
const BinaryFile = z.string().meta({ format: "binary", contentMediaType: "application/octet-stream" });

export const UploadForm = z
  .object({
    file: BinaryFile.describe("The file: PDF, JPEG or PNG, at most 10 MB, type decided by its bytes"),
    docType: z.string().describe("Document type code; one the request's workflow requires"),
    description: z.string().optional(),
  })
  .meta({ id: "DocumentUpload" });

export const UpdateForm = z
  .object({
    file: BinaryFile.describe("The new version: PDF, JPEG or PNG, at most 10 MB, type decided by its bytes"),
    description: z.string().optional(),
  })
  .meta({ id: "DocumentUpdateUpload" });
