/**
 * The main layer of the PDF scan: the document as Mozilla's pdf.js reads it, through its public API. pdf.js follows
 * the cross-reference data (repairing it when broken), decrypts, and decodes every standard filter, so what it
 * reports holds whatever filter chain, object stream or encryption the file hides it under: document, page, form
 * and annotation JavaScript, the open action, attachments, XFA, links and media annotations. It reads, it never
 * renders: no fonts, canvas, images, WebAssembly or network, and JavaScript is collected, never run.
 *
 * It runs in the scan's worker thread (pdfScanWorker.ts): importing pdf.js's worker module here makes getDocument
 * parse in this same thread, with no thread of its own.
 */
import "pdfjs-dist/legacy/build/pdf.worker.mjs";
import { getDocument, VerbosityLevel } from "pdfjs-dist/legacy/build/pdf.mjs";
import type { PdfFinding, ScanLimits } from "./pdfActiveContent.ts";
import { ScanLimitExceeded } from "./pdfRawNameScan.ts";

/** Keys of pdf.js's JavaScript maps that come from an /AA entry of the catalog, not from /OpenAction or /A. */
const DOCUMENT_EVENTS = new Set(["WillClose", "WillSave", "DidSave", "WillPrint", "DidPrint"]);
/** Annotation subtypes that play media: a reader may fetch or run a player for them. */
const MEDIA_SUBTYPES = new Set(["RichMedia", "Screen", "Movie", "Sound"]);

/** The annotation fields read here, as pdf.js's getAnnotations reports them. */
interface AnnotationData {
  subtype?: string;
  url?: string;
  unsafeUrl?: string;
  /** JavaScript by event ("Action" for /A, the event's name for an /AA entry), on form fields. */
  actions?: Map<string, string[]> | null;
  /** An embedded file a GoToE link opens. */
  attachment?: unknown;
}

/**
 * Adds to `found` what pdf.js reports in `data`; throws ScanLimitExceeded past `limits` or `deadline`, and rethrows
 * pdf.js's error for a file it cannot open (not a PDF, damaged past repair, or needing a password).
 */
export async function findInDocument(
  data: Uint8Array,
  limits: ScanLimits,
  deadline: number,
  found: Set<PdfFinding>,
): Promise<void> {
  const task = getDocument({
    data,
    verbosity: VerbosityLevel.ERRORS,
    disableFontFace: true,
    useSystemFonts: false,
    useWasm: false,
    useWorkerFetch: false,
    isOffscreenCanvasSupported: false,
    isImageDecoderSupported: false,
    disableWorkerRendering: true,
    enableXfa: false,
  });
  const checkTime = () => {
    if (performance.now() > deadline) throw new ScanLimitExceeded();
  };
  try {
    const doc = await task.promise;
    checkTime();
    addDocumentActions(await doc.getJSActions(), found);
    if ((await doc.getOpenAction())?.has("action")) found.add("OPEN_ACTION");
    if ((await doc.getAttachments())?.size) found.add("EMBEDDED_FILE");
    const { info } = await doc.getMetadata();
    if ((info as { IsXFAPresent?: boolean }).IsXFAPresent) found.add("XFA");
    for (const fields of (await doc.getFieldObjects())?.values() ?? [])
      for (const field of fields as AnnotationData[]) addFieldActions(field.actions, found);
    if (doc.numPages > limits.maxPages) throw new ScanLimitExceeded();
    let annotations = 0;
    for (let number = 1; number <= doc.numPages; number++) {
      checkTime();
      const page = await doc.getPage(number);
      const pageActions = await page.getJSActions();
      if (pageActions) found.add("JAVASCRIPT").add("ADDITIONAL_ACTIONS");
      // "any": hidden annotations too, whose actions a reader still runs.
      const pageAnnotations = (await page.getAnnotations({ intent: "any" })) as AnnotationData[];
      annotations += pageAnnotations.length;
      if (annotations > limits.maxAnnotations) throw new ScanLimitExceeded();
      for (const annotation of pageAnnotations) addAnnotation(annotation, found);
      page.cleanup();
    }
    checkTime();
  } finally {
    await task.destroy();
  }
}

function addAnnotation(annotation: AnnotationData, found: Set<PdfFinding>): void {
  // A /Launch or /GoToR link reads the same (its file name as unsafeUrl): shown as a link, which it is.
  if (annotation.url || annotation.unsafeUrl) found.add("URI_ACTION");
  addFieldActions(annotation.actions, found);
  if (annotation.subtype === "FileAttachment" || annotation.attachment) found.add("EMBEDDED_FILE");
  if (annotation.subtype && MEDIA_SUBTYPES.has(annotation.subtype)) found.add("RICH_MEDIA");
}

function addFieldActions(actions: Map<string, string[]> | null | undefined, found: Set<PdfFinding>): void {
  if (!actions?.size) return;
  found.add("JAVASCRIPT");
  if ([...actions.keys()].some((event) => event !== "Action")) found.add("ADDITIONAL_ACTIONS");
}

/** The document's scripts: named ones, the open action's, and those of the catalog's /AA events. */
function addDocumentActions(actions: Map<string, unknown> | null, found: Set<PdfFinding>): void {
  if (!actions?.size) return;
  found.add("JAVASCRIPT");
  if (actions.has("OpenAction")) found.add("OPEN_ACTION");
  if ([...actions.keys()].some((key) => DOCUMENT_EVENTS.has(key))) found.add("ADDITIONAL_ACTIONS");
}
