/**
 * An uploaded file judged by its content before anything is stored: its real type from its bytes (fileSignature.ts,
 * a name or Content-Type claiming another type is refused) and, for a PDF, the active content it carries
 * (pdfActiveContent.ts), refused when REFUSE_ACTIVE_PDF=true (a link alone excepted) and otherwise kept to be shown
 * with the version. A PDF
 * the scanner could not judge (a scan limit exceeded, a failed scan) is refused whatever REFUSE_ACTIVE_PDF says.
 */
import { checkUpload } from "./fileSignature.ts";
import type { UploadedFile } from "./multipartUpload.ts";
import { findActiveContent, type PdfFinding, UNSCANNABLE_FINDINGS } from "./pdfActiveContent.ts";
import { InvalidFileError } from "./storageErrors.ts";

export interface AcceptedFile {
  path: string;
  size: number;
  /** Lowercase hex SHA-256 of the bytes. */
  sha256: string;
  /** The client's file name, or `document.<extension>` when it sent none. */
  originalFilename: string;
  mimeType: string;
  /** Extension of the type detected from the bytes ("pdf", "png", "jpg"). */
  extension: string;
  activeContent: PdfFinding[];
}

/** The file's checked type and findings; InvalidFileError (400 INVALID_FILE) when its content is refused. */
export async function acceptUpload(file: UploadedFile, options: { refuseActivePdf: boolean }): Promise<AcceptedFile> {
  const checked = await checkUpload(file);
  const activeContent = checked.mimeType === "application/pdf" ? await findActiveContent(file.path) : [];
  if (activeContent.some((finding) => UNSCANNABLE_FINDINGS.includes(finding))) {
    const message = `This PDF could not be checked for active content within the scanner's limits: ${activeContent.join(", ")}`;
    throw new InvalidFileError(message, { reason: "UNSCANNABLE", activeContent });
  }
  // A link (URI_ACTION) is shown to the reviewers but refuses nothing by itself: most real PDFs carry one.
  if (activeContent.some((finding) => finding !== "URI_ACTION") && options.refuseActivePdf) {
    const message = `PDFs with active content are refused here: ${activeContent.join(", ")}`;
    throw new InvalidFileError(message, { reason: "ACTIVE_CONTENT", activeContent });
  }
  return {
    activeContent,
    path: file.path,
    size: file.size,
    sha256: file.sha256,
    originalFilename: file.originalFilename ?? `document.${checked.extension}`,
    mimeType: checked.mimeType,
    extension: checked.extension,
  };
}
