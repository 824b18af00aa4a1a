/**
 * What a document upload really is, decided by its content (file-type's magic-number detection), never by its name
 * or declared type. Accepted: PDF, PNG (APNG included) and JPEG.
 *
 * Refused with InvalidFileError (400 INVALID_FILE, details.reason):
 * - EMPTY: zero bytes;
 * - UNSUPPORTED_TYPE: the content is none of the three, whatever the name or Content-Type says;
 * - DISGUISED: the content is an accepted type, but the file name's extension or the part's Content-Type names a
 *   DIFFERENT accepted type (PNG bytes named scan.pdf, or sent as application/pdf). Claims that name no accepted type
 *   (no extension, ".bin", ".txt", application/octet-stream, a missing Content-Type) are not lies we can judge and are
 *   ignored: the stored type and extension always come from the content.
 *   Extensions: .pdf → PDF; .png → PNG; .jpg .jpeg .jpe .jfif → JPEG (case-insensitive, last extension only).
 *   Content-Types (parameters ignored, case-insensitive): application/pdf, application/x-pdf → PDF; image/png,
 *   image/x-png → PNG; image/jpeg, image/jpg, image/pjpeg → JPEG.
 */
import path from "node:path";
import { fileTypeFromBuffer, fileTypeFromFile, type FileTypeResult } from "file-type";
import { InvalidFileError } from "./storageErrors.ts";

export type DocumentMimeType = "application/pdf" | "image/png" | "image/jpeg";

export interface CheckedFile {
  mimeType: DocumentMimeType;
  /** Extension of the detected type, without the dot: "pdf", "png" or "jpg". */
  extension: "pdf" | "png" | "jpg";
}

/** file-type's answers that are a document type of ours. */
const ACCEPTED: Record<string, CheckedFile> = {
  pdf: { mimeType: "application/pdf", extension: "pdf" },
  png: { mimeType: "image/png", extension: "png" },
  apng: { mimeType: "image/png", extension: "png" },
  jpg: { mimeType: "image/jpeg", extension: "jpg" },
};

const EXTENSION_CLAIMS: Record<string, DocumentMimeType> = {
  ".pdf": "application/pdf",
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".jpe": "image/jpeg",
  ".jfif": "image/jpeg",
};
const CONTENT_TYPE_CLAIMS: Record<string, DocumentMimeType> = {
  "application/pdf": "application/pdf",
  "application/x-pdf": "application/pdf",
  "image/png": "image/png",
  "image/x-png": "image/png",
  "image/jpeg": "image/jpeg",
  "image/jpg": "image/jpeg",
  "image/pjpeg": "image/jpeg",
};

export const ACCEPTED_TYPES: readonly DocumentMimeType[] = ["application/pdf", "image/png", "image/jpeg"];

const accepted = (found: FileTypeResult | undefined) => (found && ACCEPTED[found.ext]) || undefined;

/** The accepted type of the file at `filePath`, or undefined. */
export async function detectFileType(filePath: string): Promise<CheckedFile | undefined> {
  return accepted(await fileTypeFromFile(filePath));
}

export async function detectBytes(bytes: Uint8Array): Promise<CheckedFile | undefined> {
  return accepted(await fileTypeFromBuffer(bytes));
}

/** The accepted type a file name's extension claims, if any. */
export function typeClaimedByName(name: string | null | undefined): DocumentMimeType | undefined {
  if (!name) return undefined;
  return EXTENSION_CLAIMS[path.extname(name.trim()).toLowerCase()];
}

/** The accepted type a Content-Type claims, if any. */
export function typeClaimedByContentType(contentType: string | null | undefined): DocumentMimeType | undefined {
  if (!contentType) return undefined;
  return CONTENT_TYPE_CLAIMS[contentType.split(";")[0]!.trim().toLowerCase()];
}

export interface UploadToCheck {
  path: string;
  size: number;
  originalFilename?: string | null;
  declaredType?: string | null;
}

function invalid(
  reason: "EMPTY" | "UNSUPPORTED_TYPE" | "DISGUISED",
  message: string,
  details: Record<string, unknown>,
): InvalidFileError {
  return new InvalidFileError(message, { reason, ...details });
}

/** The document's real type, or 400 INVALID_FILE (details.reason EMPTY, UNSUPPORTED_TYPE or DISGUISED). */
export async function checkUpload(upload: UploadToCheck): Promise<CheckedFile> {
  const name = upload.originalFilename ?? null;
  const declaredType = upload.declaredType ?? null;
  const context = { filename: name, declaredType, accepted: ACCEPTED_TYPES };
  if (upload.size === 0) throw invalid("EMPTY", "The file is empty", context);
  const detected = await detectFileType(upload.path);
  if (!detected) {
    throw invalid(
      "UNSUPPORTED_TYPE",
      "Only PDF, PNG and JPEG documents are accepted; the file's content is none of these",
      context,
    );
  }
  const claims: { source: "filename" | "contentType"; claimed: DocumentMimeType }[] = [];
  const byName = typeClaimedByName(name);
  if (byName) claims.push({ source: "filename", claimed: byName });
  const byType = typeClaimedByContentType(declaredType);
  if (byType) claims.push({ source: "contentType", claimed: byType });
  const lie = claims.find((claim) => claim.claimed !== detected.mimeType);
  if (lie) {
    const what = lie.source === "filename" ? `its name "${name}"` : `its Content-Type "${declaredType}"`;
    throw invalid(
      "DISGUISED",
      `The file's content is ${label(detected.mimeType)} but ${what} says ${label(lie.claimed)}`,
      {
        ...context,
        detectedType: detected.mimeType,
        claimedType: lie.claimed,
        claimedBy: lie.source,
      },
    );
  }
  return detected;
}

function label(type: DocumentMimeType): string {
  return type === "application/pdf" ? "PDF" : type === "image/png" ? "PNG" : "JPEG";
}
