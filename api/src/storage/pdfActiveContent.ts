/**
 * Active content in an uploaded PDF, which a reviewer's PDF reader might run or open: JavaScript, launch actions,
 * embedded files, XFA forms, actions run on opening or on events (an /OpenAction that is an action, /AA), links
 * (URI), form submission and rich media. A finding is stored with the version and shown in the document detail;
 * REFUSE_ACTIVE_PDF refuses such uploads. This is a flag, not a sanitiser or a virus scan.
 *
 * Two layers read the file, in a worker thread (pdfScanWorker.ts): a cheap scan of the names in its bytes and Flate
 * streams, which also refuses compression bombs (pdfRawNameScan.ts), then Mozilla's pdf.js, which decodes every
 * filter and reports what a viewer would run or open (pdfDocumentScan.ts). The thread has a heap limit, a cap on
 * the memory it holds outside its heap, and a wall-clock timeout, so a hostile file costs the API's event loop
 * nothing; inside it a budget of inflated bytes, caps on streams, pages and annotations, and a cap on scan time bound
 * the work. A file that exceeds a limit, that pdf.js cannot open, or whose scan crashes, is not judged clean: it
 * gets SCAN_LIMIT_EXCEEDED or SCAN_FAILED, and acceptUpload refuses it whatever REFUSE_ACTIVE_PDF says.
 */
import { availableParallelism } from "node:os";
import { Worker } from "node:worker_threads";

export const PDF_FINDINGS = [
  "JAVASCRIPT",
  "LAUNCH_ACTION",
  "EMBEDDED_FILE",
  "XFA",
  "OPEN_ACTION",
  "ADDITIONAL_ACTIONS",
  "URI_ACTION",
  "SUBMIT_FORM",
  "RICH_MEDIA",
  "SCAN_LIMIT_EXCEEDED",
  "SCAN_FAILED",
] as const;
export type PdfFinding = (typeof PDF_FINDINGS)[number];

/** Findings that say the file could not be judged: never a pass, refused wherever the upload happens. */
export const UNSCANNABLE_FINDINGS: readonly PdfFinding[] = ["SCAN_LIMIT_EXCEEDED", "SCAN_FAILED"];

export interface ScanLimits {
  /** Bytes the raw layer inflates from all streams together, so a compression bomb costs bounded memory and time. */
  maxDecodedBytes: number;
  /** Streams the raw layer examines; past it the file is not judged. */
  maxStreams: number;
  /** Pages pdf.js walks; past it the file is not judged. */
  maxPages: number;
  /** Annotations pdf.js reports, all pages together; past it the file is not judged. */
  maxAnnotations: number;
  /** Time spent scanning inside the worker. */
  maxScanMs: number;
}

export const DEFAULT_SCAN_LIMITS: ScanLimits = {
  maxDecodedBytes: 64 * 1024 * 1024,
  maxStreams: 10_000,
  maxPages: 2_000,
  maxAnnotations: 20_000,
  // Wall-clock time: generous, so a busy machine does not refuse an ordinary file (a scan takes tens of CPU-ms).
  maxScanMs: 8_000,
};

export interface ScanOptions {
  limits?: Partial<ScanLimits>;
  /** Wall-clock limit of the scan in its worker; then the worker is terminated and the file refused. */
  timeoutMs?: number;
  /** Memory the worker may hold outside its heap (the file, decoded streams); then it is terminated likewise. */
  maxExternalMemoryMb?: number;
}

/** Wall-clock limit of one scan, from the moment its worker has the file: above maxScanMs, for reading it. */
const DEFAULT_TIMEOUT_MS = 10_000;
/** Time a new worker may take to load pdf.js (about 300 ms of CPU; more on a busy machine). */
const WORKER_START_MS = 30_000;
/** The worker's heap: pdf.js's objects. Bytes (the file, decoded streams) live outside it, capped below. */
const WORKER_RESOURCE_LIMITS = { maxOldGenerationSizeMb: 128, maxYoungGenerationSizeMb: 32, stackSizeMb: 4 };
/**
 * Bytes outside the heap, polled while the scan runs: resourceLimits do not count ArrayBuffers, and pdf.js holds a
 * stream it decodes whole. A 10 MB upload needs a few times its size; a decoding bomb is stopped one poll after it
 * passes the cap.
 */
const DEFAULT_EXTERNAL_MEMORY_MB = 256;
const MEMORY_POLL_MS = 25;
/** Scans running at once: each may use a core and its memory caps; the rest wait their turn. */
const MAX_CONCURRENT_SCANS = Math.max(1, Math.min(4, availableParallelism() - 1));
/**
 * Scans one worker serves before it is replaced. Loading pdf.js costs a worker about 300 ms of CPU, so idle workers
 * are kept for the next upload; a fresh one now and then bounds whatever a long-lived one accumulates.
 */
const SCANS_PER_WORKER = 100;

/**
 * The kinds of active content the PDF at `filePath` carries, in PDF_FINDINGS order (empty: none found). Never
 * rejects: a scan that cannot finish answers SCAN_LIMIT_EXCEEDED or SCAN_FAILED.
 */
export async function findActiveContent(filePath: string, options: ScanOptions = {}): Promise<PdfFinding[]> {
  const limits = { ...DEFAULT_SCAN_LIMITS, ...options.limits };
  await takeScanSlot();
  try {
    return await scanInWorker(
      filePath,
      limits,
      options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      (options.maxExternalMemoryMb ?? DEFAULT_EXTERNAL_MEMORY_MB) * 1024 * 1024,
    );
  } finally {
    releaseScanSlot();
  }
}

let runningScans = 0;
const waitingScans: (() => void)[] = [];

function takeScanSlot(): Promise<void> {
  if (runningScans < MAX_CONCURRENT_SCANS) {
    runningScans++;
    return Promise.resolve();
  }
  return new Promise((resolve) => waitingScans.push(resolve));
}

function releaseScanSlot(): void {
  const next = waitingScans.shift();
  if (next) next();
  else runningScans--;
}

interface ScanThread {
  worker: Worker;
  /** Settles when the worker has loaded pdf.js (rejects when it could not). */
  ready: Promise<void>;
  scans: number;
}

/** Workers that finished a scan normally, waiting for the next one (unreferenced: they never keep the API alive). */
const idleThreads: ScanThread[] = [];

function takeThread(): ScanThread {
  const idle = idleThreads.pop();
  if (idle) {
    idle.worker.ref();
    return idle;
  }
  // pdf.js runs there with its warnings off, so the worker writes nothing to the API's output.
  const worker = new Worker(new URL("./pdfScanWorker.ts", import.meta.url), { resourceLimits: WORKER_RESOURCE_LIMITS });
  const ready = new Promise<void>((resolve, reject) => {
    worker.once("message", () => resolve());
    worker.once("error", reject);
    worker.once("exit", () => reject(new Error("The PDF scan worker stopped while loading")));
  });
  const thread = { worker, ready, scans: 0 };
  ready.catch(() => {});
  worker.on("exit", () => {
    const index = idleThreads.indexOf(thread);
    if (index >= 0) idleThreads.splice(index, 1);
  });
  return thread;
}

async function scanInWorker(
  filePath: string,
  limits: ScanLimits,
  timeoutMs: number,
  maxExternal: number,
): Promise<PdfFinding[]> {
  const thread = takeThread();
  const { worker } = thread;
  // Loading pdf.js takes the same time whatever the file: the file's time starts when the worker has it.
  const loaded = await Promise.race([
    thread.ready.then(() => true),
    new Promise<false>((resolve) => setTimeout(resolve, WORKER_START_MS, false).unref()),
  ]).catch(() => false);
  if (!loaded) {
    void worker.terminate();
    return ["SCAN_FAILED"];
  }
  thread.scans++;
  return new Promise<PdfFinding[]>((resolve) => {
    let settled = false;
    const settle = (findings: PdfFinding[], reusable: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearInterval(memoryPoll);
      worker.off("message", onMessage).off("error", onError).off("exit", onExit);
      if (reusable && thread.scans < SCANS_PER_WORKER) {
        worker.unref();
        idleThreads.push(thread);
      } else {
        // The answer does not wait for the thread to stop: terminating a busy worker takes effect once it yields.
        void worker.terminate();
      }
      resolve(findings);
    };
    const onMessage = (message: unknown) => settle(asFindings(message), true);
    const onError = (error: NodeJS.ErrnoException) =>
      settle([error.code === "ERR_WORKER_OUT_OF_MEMORY" ? "SCAN_LIMIT_EXCEEDED" : "SCAN_FAILED"], false);
    const onExit = () => settle(["SCAN_FAILED"], false);
    const timer = setTimeout(() => settle(["SCAN_LIMIT_EXCEEDED"], false), timeoutMs);
    // Answered between the worker's own steps, even while it runs synchronous code.
    const memoryPoll = setInterval(() => {
      worker.getHeapStatistics().then(
        (heap) => heap.external_memory > maxExternal && settle(["SCAN_LIMIT_EXCEEDED"], false),
        () => {},
      );
    }, MEMORY_POLL_MS);
    worker.on("message", onMessage).on("error", onError).on("exit", onExit);
    worker.postMessage({ filePath, limits });
  });
}

function asFindings(message: unknown): PdfFinding[] {
  if (!Array.isArray(message) || !message.every((m) => (PDF_FINDINGS as readonly unknown[]).includes(m)))
    return ["SCAN_FAILED"];
  return message as PdfFinding[];
}
