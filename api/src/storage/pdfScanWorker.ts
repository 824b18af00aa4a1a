/**
 * The PDF scan's thread (started and reused by pdfActiveContent.ts): for each file it is sent, reads it, scans it
 * within the limits it is given and posts the findings. Its heap is limited, its memory outside the heap watched, and
 * it is terminated when it runs too long, so neither a bug nor a hostile file in the scan can hold the API's event
 * loop or memory.
 */
import { readFile } from "node:fs/promises";
import { parentPort } from "node:worker_threads";
import { PDF_FINDINGS, type PdfFinding, type ScanLimits } from "./pdfActiveContent.ts";
import { findInDocument } from "./pdfDocumentScan.ts";
import { findNamesInBytes, ScanLimitExceeded } from "./pdfRawNameScan.ts";

async function scanPdfFile(filePath: string, limits: ScanLimits): Promise<PdfFinding[]> {
  const found = new Set<PdfFinding>();
  const deadline = performance.now() + limits.maxScanMs;
  try {
    const bytes = await readFile(filePath);
    findNamesInBytes(bytes, limits, deadline, found);
    // pdf.js takes the bytes it is given (they are transferred to its message handler): a copy.
    await findInDocument(new Uint8Array(bytes), limits, deadline, found);
  } catch (error) {
    found.add(error instanceof ScanLimitExceeded ? "SCAN_LIMIT_EXCEEDED" : "SCAN_FAILED");
  }
  return PDF_FINDINGS.filter((finding) => found.has(finding));
}

// pdf.js is loaded (imported above): the worker is ready for files.
parentPort!.postMessage("ready");
parentPort!.on("message", ({ filePath, limits }: { filePath: string; limits: ScanLimits }) => {
  void scanPdfFile(filePath, limits).then((findings) => parentPort!.postMessage(findings));
});
