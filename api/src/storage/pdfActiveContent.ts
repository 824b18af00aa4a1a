/**
 * Active content in an uploaded PDF, which a reviewer's PDF reader might run or open: JavaScript (/JavaScript, /JS),
 * launch actions (/Launch), embedded files (/EmbeddedFile(s), /FileAttachment) and XFA forms (/XFA). Names are
 * read as PDF names (#xx escapes decoded, so /J#61vaScript is /JavaScript), in the file's bytes and inside its
 * Flate-compressed streams (object streams hide dictionaries there). A finding is stored with the version and shown
 * in the document detail; REFUSE_ACTIVE_PDF refuses such uploads. This is a flag, not a sanitiser or a virus scan.
 */
import { readFile } from "node:fs/promises";
import { inflateSync } from "node:zlib";

export const PDF_FINDINGS = ["JAVASCRIPT", "LAUNCH_ACTION", "EMBEDDED_FILE", "XFA"] as const;
export type PdfFinding = (typeof PDF_FINDINGS)[number];

const FINDING_OF_NAME: Record<string, PdfFinding> = {
  JavaScript: "JAVASCRIPT",
  JS: "JAVASCRIPT",
  Launch: "LAUNCH_ACTION",
  EmbeddedFile: "EMBEDDED_FILE",
  EmbeddedFiles: "EMBEDDED_FILE",
  FileAttachment: "EMBEDDED_FILE",
  XFA: "XFA",
};
/** Inflated bytes looked at in all, so a compression bomb costs bounded memory and time. */
const MAX_INFLATED_BYTES = 64 * 1024 * 1024;

/** The kinds of active content the PDF at `filePath` carries, in PDF_FINDINGS order (empty: none found). */
export async function findActiveContent(filePath: string): Promise<PdfFinding[]> {
  const bytes = await readFile(filePath);
  const found = new Set<PdfFinding>();
  scanNames(bytes, found);
  let budget = MAX_INFLATED_BYTES;
  for (const stream of streamsOf(bytes)) {
    if (budget <= 0) break;
    try {
      const inflated = inflateSync(stream, { maxOutputLength: budget });
      budget -= inflated.length;
      scanNames(inflated, found);
    } catch {
      // not Flate, damaged, or over the budget: its raw bytes were scanned already
    }
  }
  return PDF_FINDINGS.filter((f) => found.has(f));
}

function scanNames(bytes: Buffer, found: Set<PdfFinding>): void {
  const text = bytes.toString("latin1");
  for (const match of text.matchAll(/\/([A-Za-z0-9#]{2,40})/g)) {
    const name = match[1].replace(/#([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    const finding = FINDING_OF_NAME[name];
    if (finding) found.add(finding);
  }
}

/** The data of each `stream … endstream` section. */
function* streamsOf(bytes: Buffer): Generator<Buffer> {
  let from = 0;
  for (;;) {
    const start = bytes.indexOf("stream", from, "latin1");
    if (start < 0) return;
    let dataStart = start + 6;
    if (bytes[dataStart] === 0x0d) dataStart++;
    if (bytes[dataStart] === 0x0a) dataStart++;
    const end = bytes.indexOf("endstream", dataStart, "latin1");
    if (end < 0) return;
    if (start === 0 || bytes[start - 1] !== 0x64 /* "endstream" itself */) yield bytes.subarray(dataStart, end);
    from = end + 9;
  }
}
