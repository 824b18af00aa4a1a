/**
 * Active content in an uploaded PDF, which a reviewer's PDF reader might run or open: JavaScript (/JavaScript, /JS),
 * launch actions (/Launch), embedded files (/EmbeddedFile(s), /FileAttachment), XFA forms (/XFA), actions run on
 * opening or on events (/OpenAction with an action, /AA), links (/URI), form submission (/SubmitForm) and rich media
 * (/RichMedia). Names are read as PDF names (#xx escapes decoded, so /J#61vaScript is /JavaScript), in the file's
 * bytes and inside its streams, decoded through their filter chains (FlateDecode, ASCIIHexDecode, ASCII85Decode; an
 * unknown filter ends the chain): object streams hide dictionaries there. A finding is stored with the version and
 * shown in the document detail; REFUSE_ACTIVE_PDF refuses such uploads. This is a flag, not a sanitiser or a virus
 * scan.
 *
 * The scan runs in a worker thread (pdfScanWorker.ts) with a heap limit and a wall-clock timeout, so a hostile file
 * costs the API's event loop nothing; inside it one budget of decoded bytes (every byte any filter produces, whether
 * the stream decodes or not), a cap on the streams examined and a cap on scan time bound the work. A file that
 * exceeds a limit, or whose scan crashes, is not judged clean: it gets SCAN_LIMIT_EXCEEDED or SCAN_FAILED, and
 * acceptUpload refuses it whatever REFUSE_ACTIVE_PDF says.
 */
import { availableParallelism } from "node:os";
import { Worker } from "node:worker_threads";
import { constants as zlibConstants, inflateSync } from "node:zlib";

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

/**
 * What a name's value must look like to count. Two-letter names turn up by chance in compressed or image bytes
 * (about one "/AA" per 65 KB of random bytes), and /OpenAction's common value is a plain destination array (open
 * at page 1): requiring the value's shape keeps those from being findings.
 */
type ValueShape = "any" | "dictionary" | "stringOrStream";
const FINDING_OF_NAME: Record<string, [PdfFinding, ValueShape]> = {
  JavaScript: ["JAVASCRIPT", "any"],
  JS: ["JAVASCRIPT", "stringOrStream"],
  Launch: ["LAUNCH_ACTION", "any"],
  EmbeddedFile: ["EMBEDDED_FILE", "any"],
  EmbeddedFiles: ["EMBEDDED_FILE", "any"],
  FileAttachment: ["EMBEDDED_FILE", "any"],
  XFA: ["XFA", "any"],
  OpenAction: ["OPEN_ACTION", "dictionary"],
  AA: ["ADDITIONAL_ACTIONS", "dictionary"],
  URI: ["URI_ACTION", "any"],
  SubmitForm: ["SUBMIT_FORM", "any"],
  RichMedia: ["RICH_MEDIA", "any"],
  RichMediaExecute: ["RICH_MEDIA", "any"],
};

export interface ScanLimits {
  /** Bytes produced by all filters of all streams together, so a compression bomb costs bounded memory and time. */
  maxDecodedBytes: number;
  /** Streams examined; past it the file is not judged. */
  maxStreams: number;
  /** Time spent scanning inside the worker. */
  maxScanMs: number;
}

export const DEFAULT_SCAN_LIMITS: ScanLimits = {
  maxDecodedBytes: 64 * 1024 * 1024,
  maxStreams: 10_000,
  maxScanMs: 2_000,
};

export interface ScanOptions {
  limits?: Partial<ScanLimits>;
  /** Wall-clock limit of the worker, start-up included; then it is terminated and the file refused. */
  timeoutMs?: number;
}

/** Wall-clock limit of one scan's worker: above maxScanMs, for the worker's start-up and reading the file. */
const DEFAULT_TIMEOUT_MS = 5_000;
/** The worker's own heap: decoded bytes live outside it (Buffers), names are read from bytes, never as strings. */
const WORKER_RESOURCE_LIMITS = { maxOldGenerationSizeMb: 128, maxYoungGenerationSizeMb: 32, stackSizeMb: 4 };
/** Scans running at once: each may use a core and up to the decode budget of memory; the rest wait their turn. */
const MAX_CONCURRENT_SCANS = Math.max(1, Math.min(4, availableParallelism() - 1));

/**
 * The kinds of active content the PDF at `filePath` carries, in PDF_FINDINGS order (empty: none found). Never
 * rejects: a scan that cannot finish answers SCAN_LIMIT_EXCEEDED or SCAN_FAILED.
 */
export async function findActiveContent(filePath: string, options: ScanOptions = {}): Promise<PdfFinding[]> {
  const limits = { ...DEFAULT_SCAN_LIMITS, ...options.limits };
  await takeScanSlot();
  try {
    return await scanInWorker(filePath, limits, options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
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

function scanInWorker(filePath: string, limits: ScanLimits, timeoutMs: number): Promise<PdfFinding[]> {
  return new Promise((resolve) => {
    let settled = false;
    const worker = new Worker(new URL("./pdfScanWorker.ts", import.meta.url), {
      workerData: { filePath, limits },
      resourceLimits: WORKER_RESOURCE_LIMITS,
      stdout: true,
      stderr: true,
    });
    const settle = (findings: PdfFinding[]) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(findings);
      // The answer does not wait for the thread to stop: terminating a busy worker takes effect once it yields.
      void worker.terminate();
    };
    const timer = setTimeout(() => settle(["SCAN_LIMIT_EXCEEDED"]), timeoutMs);
    worker.once("message", (message: unknown) => settle(asFindings(message)));
    worker.once("error", (error: NodeJS.ErrnoException) =>
      settle([error.code === "ERR_WORKER_OUT_OF_MEMORY" ? "SCAN_LIMIT_EXCEEDED" : "SCAN_FAILED"]),
    );
    worker.once("exit", () => settle(["SCAN_FAILED"]));
  });
}

function asFindings(message: unknown): PdfFinding[] {
  if (!Array.isArray(message) || !message.every((m) => (PDF_FINDINGS as readonly unknown[]).includes(m)))
    return ["SCAN_FAILED"];
  return message as PdfFinding[];
}

class ScanLimitExceeded extends Error {}

/** The scan itself, on the bytes of a file (run by pdfScanWorker.ts; synchronous and bounded by `limits`). */
export function scanPdfBytes(bytes: Buffer, limits: ScanLimits = DEFAULT_SCAN_LIMITS): PdfFinding[] {
  const found = new Set<PdfFinding>();
  const deadline = performance.now() + limits.maxScanMs;
  const budget = { left: limits.maxDecodedBytes };
  scanNames(bytes, found);
  let streams = 0;
  try {
    for (const stream of streamsOf(bytes)) {
      if (++streams > limits.maxStreams || performance.now() > deadline) throw new ScanLimitExceeded();
      const declared = declaredFilters(stream.dictionary);
      const guessed = declared.length === 0;
      const filters = guessed ? [recognisedFilter(stream.data, true)].filter((f) => f !== undefined) : declared;
      // Only what a reader parses as objects needs reading whole: a sample tells object streams (integer pairs
      // first) from images and fonts, whose decoded bytes need not count against the budget.
      const sample = decodeChain(stream.data.subarray(0, SAMPLE_INPUT_BYTES), filters, guessed, budget);
      if (sample && mayHoldObjects(sample)) {
        const decoded = decodeChain(stream.data, filters, guessed, budget);
        if (decoded) scanNames(decoded, found);
      } else if (sample) scanNames(sample, found);
    }
  } catch (error) {
    if (!(error instanceof ScanLimitExceeded)) throw error;
    found.add("SCAN_LIMIT_EXCEEDED");
  }
  if (performance.now() > deadline) found.add("SCAN_LIMIT_EXCEEDED");
  return PDF_FINDINGS.filter((f) => found.has(f));
}

/** Input bytes of a stream decoded first, to see what it holds. */
const SAMPLE_INPUT_BYTES = 1024;
/** Filters in one chain, declared or guessed. */
const MAX_FILTERS = 8;

type Filter = "flate" | "hex" | "a85" | "unknown";

/**
 * The stream's data through its filters, or null when there was nothing to decode (no filter, or an unknown first
 * one: its raw bytes were scanned with the file). Without a declared filter the data's form is recognised (zlib
 * header, hex digits, ASCII85 ending in ~>), so a /Filter that is an indirect reference or hidden from this
 * scanner's view of the dictionary is still decoded. A filter that fails ends the chain with what was decoded.
 */
function decodeChain(data: Buffer, filters: Filter[], guessed: boolean, budget: { left: number }): Buffer | null {
  let current = data;
  let decodedAny = false;
  for (let i = 0; i < MAX_FILTERS; i++) {
    const filter =
      i < filters.length ? filters[i] : guessed && decodedAny ? recognisedFilter(current, false) : undefined;
    if (!filter || filter === "unknown") break;
    const next = applyFilter(filter, current, budget);
    if (!next) break;
    current = next;
    decodedAny = true;
  }
  return decodedAny ? current : null;
}

function applyFilter(filter: Exclude<Filter, "unknown">, input: Buffer, budget: { left: number }): Buffer | null {
  if (budget.left <= 0) throw new ScanLimitExceeded();
  let output: Buffer;
  if (filter === "flate") {
    try {
      // Sync flush: a truncated or damaged stream still yields what precedes the damage, as readers show it.
      output = inflateSync(input, { finishFlush: zlibConstants.Z_SYNC_FLUSH, maxOutputLength: budget.left });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ERR_BUFFER_TOO_LARGE") {
        // It inflated the whole budget before giving up: that work is spent.
        budget.left = 0;
        throw new ScanLimitExceeded();
      }
      return null;
    }
  } else {
    output = filter === "hex" ? asciiHexDecode(input, budget.left) : ascii85Decode(input, budget.left);
  }
  budget.left -= output.length;
  if (budget.left < 0) throw new ScanLimitExceeded();
  return output;
}

/** PDF white space (NUL included, as readers take it). */
function isWhite(byte: number): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09 || byte === 0x0c || byte === 0x00;
}

/** An object stream begins with integer pairs (after white space or comments); undecided counts as maybe. */
function mayHoldObjects(sample: Buffer): boolean {
  let i = 0;
  while (i < sample.length) {
    if (isWhite(sample[i]!)) i++;
    else if (sample[i] === 0x25 /* % */) {
      while (i < sample.length && sample[i] !== 0x0a && sample[i] !== 0x0d) i++;
    } else return sample[i]! >= 0x30 && sample[i]! <= 0x39;
  }
  return true;
}

/**
 * The filter a stream's bytes look encoded with. Hex digits are a weak sign (an object stream's integers look the
 * same), so only raw stream data is taken as hex, never the output of another filter.
 */
function recognisedFilter(data: Buffer, raw: boolean): Filter | undefined {
  if (data.length >= 2 && (data[0]! & 0x0f) === 8 && ((data[0]! << 8) | data[1]!) % 31 === 0) return "flate";
  if (/~>\s*$/.test(data.subarray(Math.max(0, data.length - 16)).toString("latin1"))) return "a85";
  if (!raw) return undefined;
  let i = 0;
  while (i < data.length && isWhite(data[i]!)) i++;
  const head = data.subarray(i, i + 64).toString("latin1");
  if (head.length > 0 && /^[0-9A-Fa-f\s]*(>|$)/.test(head)) return "hex";
  return undefined;
}

const FILTER_NAMES: Record<string, Filter> = {
  FlateDecode: "flate",
  Fl: "flate",
  ASCIIHexDecode: "hex",
  AHx: "hex",
  ASCII85Decode: "a85",
  A85: "a85",
};

/** The /Filter chain written in the dictionary before a stream (empty: none written, or not as a name or array). */
function declaredFilters(dictionary: Buffer): Filter[] {
  const text = dictionary
    .toString("latin1")
    .replace(/#([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  const matches = [...text.matchAll(/\/Filter[\s\0]*(\[[^\]]*\]|\/[^\s\0/[\]<>()%]+)/g)];
  const value = matches.at(-1)?.[1];
  if (!value) return [];
  const names = [...value.matchAll(/\/([^\s\0/[\]<>()%]+)/g)].map((m) => m[1]!);
  return names.slice(0, MAX_FILTERS).map((name) => FILTER_NAMES[name] ?? "unknown");
}

function hexValue(byte: number): number {
  if (byte >= 0x30 && byte <= 0x39) return byte - 0x30;
  if (byte >= 0x41 && byte <= 0x46) return byte - 0x37;
  if (byte >= 0x61 && byte <= 0x66) return byte - 0x57;
  return -1;
}

/** ASCIIHexDecode: pairs of hex digits up to ">", other bytes skipped; an odd last digit is followed by 0. */
function asciiHexDecode(input: Buffer, maxOutput: number): Buffer {
  const output = Buffer.allocUnsafe(Math.min(Math.ceil(input.length / 2), maxOutput + 1));
  let length = 0;
  let high = -1;
  for (let i = 0; i < input.length && length < output.length; i++) {
    if (input[i] === 0x3e) break;
    const digit = hexValue(input[i]!);
    if (digit < 0) continue;
    if (high < 0) high = digit;
    else {
      output[length++] = (high << 4) | digit;
      high = -1;
    }
  }
  if (high >= 0 && length < output.length) output[length++] = high << 4;
  return output.subarray(0, length);
}

/** ASCII85Decode: groups of five characters "!".."u" to four bytes, "z" for four zeros, up to "~". */
function ascii85Decode(input: Buffer, maxOutput: number): Buffer {
  const output = Buffer.allocUnsafe(Math.min(Math.ceil(input.length / 5) * 4 + 4, maxOutput + 1));
  let length = 0;
  const group: number[] = [];
  const put = (byte: number) => {
    if (length < output.length) output[length++] = byte;
  };
  for (let i = 0; i < input.length && length < output.length; i++) {
    const c = input[i]!;
    if (c === 0x7e /* ~ */) break;
    if (c === 0x7a /* z */ && group.length === 0) {
      for (let k = 0; k < 4; k++) put(0);
    } else if (c >= 0x21 && c <= 0x75) {
      group.push(c - 0x21);
      if (group.length === 5) {
        const value = group.reduce((acc, d) => acc * 85 + d, 0);
        for (let k = 3; k >= 0; k--) put(Math.floor(value / 256 ** k) % 256);
        group.length = 0;
      }
    }
  }
  if (group.length > 1) {
    const count = group.length - 1;
    while (group.length < 5) group.push(84);
    const value = group.reduce((acc, d) => acc * 85 + d, 0);
    for (let k = 3; k >= 4 - count; k--) put(Math.floor(value / 256 ** k) % 256);
  }
  return output.subarray(0, length);
}

/** Bytes that end a PDF name: white space and delimiters. */
function endsName(byte: number): boolean {
  return isWhite(byte) || "()<>[]{}/%".includes(String.fromCharCode(byte)) || byte < 0x21 || byte > 0x7e;
}

/** Longest name looked at, in bytes as written (each character may be a three-byte #xx escape). */
const MAX_NAME_BYTES = 64;

function scanNames(bytes: Buffer, found: Set<PdfFinding>): void {
  for (let slash = bytes.indexOf(0x2f); slash >= 0; slash = bytes.indexOf(0x2f, slash + 1)) {
    let end = slash + 1;
    while (end < bytes.length && end - slash <= MAX_NAME_BYTES && !endsName(bytes[end]!)) end++;
    if (end - slash < 3 || end - slash > MAX_NAME_BYTES) continue;
    const name = bytes
      .subarray(slash + 1, end)
      .toString("latin1")
      .replace(/#([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    const entry = FINDING_OF_NAME[name];
    if (entry && valueHasShape(bytes, end, entry[1])) found.add(entry[0]);
  }
}

/** Whether the value after a name (past white space and comments) has the shape its finding requires. */
function valueHasShape(bytes: Buffer, from: number, shape: ValueShape): boolean {
  if (shape === "any") return true;
  let i = from;
  for (;;) {
    while (i < bytes.length && isWhite(bytes[i]!)) i++;
    if (bytes[i] !== 0x25 /* % */) break;
    while (i < bytes.length && bytes[i] !== 0x0a && bytes[i] !== 0x0d) i++;
  }
  const dictionary = bytes[i] === 0x3c && bytes[i + 1] === 0x3c;
  const reference = /^\d+[\s\0]+\d+[\s\0]+R/.test(bytes.subarray(i, i + 32).toString("latin1"));
  if (shape === "dictionary") return dictionary || reference;
  return reference || bytes[i] === 0x28 /* ( */ || (bytes[i] === 0x3c && !dictionary);
}

interface StreamSection {
  /** Bytes before the `stream` keyword, where its dictionary is (at most a few KB, back to the previous stream). */
  dictionary: Buffer;
  data: Buffer;
}

/** Bytes before a `stream` keyword searched for its dictionary. */
const DICTIONARY_WINDOW = 4096;

/**
 * The data of each `stream` keyword (followed by an end of line) up to the next `endstream`. Every keyword counts,
 * also one inside another stream's data or inside a string: a decoy keyword cannot hide the stream after it.
 */
function* streamsOf(bytes: Buffer): Generator<StreamSection> {
  let from = 0;
  let previousKeywordEnd = 0;
  let nextEnd = -1;
  for (;;) {
    const keyword = bytes.indexOf("stream", from, "latin1");
    if (keyword < 0) return;
    from = keyword + 6;
    if (keyword >= 3 && bytes.toString("latin1", keyword - 3, keyword) === "end") continue;
    let dataStart = keyword + 6;
    if (bytes[dataStart] === 0x0d) dataStart++;
    if (bytes[dataStart] === 0x0a) dataStart++;
    if (dataStart === keyword + 6) continue;
    // The first `endstream` after the data's start, found once for all the keywords before it.
    if (nextEnd < dataStart) {
      nextEnd = bytes.indexOf("endstream", dataStart, "latin1");
      if (nextEnd < 0) nextEnd = bytes.length;
    }
    yield {
      dictionary: bytes.subarray(Math.max(previousKeywordEnd, keyword - DICTIONARY_WINDOW), keyword),
      data: bytes.subarray(dataStart, nextEnd),
    };
    previousKeywordEnd = keyword + 6;
  }
}
