/**
 * The cheap second layer of the PDF scan: action names read straight from the file's bytes, and from its Flate
 * streams that may hold objects, whether or not anything references them. pdf.js (pdfDocumentScan.ts) decodes every
 * filter but reports only what a viewer uses; it says nothing of a /Launch or /SubmitForm action, of an /OpenAction
 * or /AA whose action is not JavaScript, or of JavaScript behind a link. This layer sees those where real generators
 * write them: in plain objects and in Flate object streams. It also runs first, with a budget on every byte it
 * inflates, so a compression bomb is refused before pdf.js reads the file.
 */
import { constants as zlibConstants, inflateSync } from "node:zlib";
import type { PdfFinding, ScanLimits } from "./pdfActiveContent.ts";

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

export class ScanLimitExceeded extends Error {}

/** Input bytes of a stream inflated first, to see whether it may hold objects. */
const SAMPLE_INPUT_BYTES = 1024;

/** Findings named in the bytes; throws ScanLimitExceeded past the inflate budget, the stream cap or `deadline`. */
export function findNamesInBytes(bytes: Buffer, limits: ScanLimits, deadline: number, found: Set<PdfFinding>): void {
  const budget = { left: limits.maxDecodedBytes };
  scanNames(bytes, found);
  let streams = 0;
  for (const stream of streamsOf(bytes)) {
    if (++streams > limits.maxStreams || performance.now() > deadline) throw new ScanLimitExceeded();
    if (!isFlate(stream)) continue;
    // Only what a reader parses as objects needs inflating whole: a sample tells object streams (integer pairs
    // first) from images and fonts, whose bytes need not count against the budget.
    const sample = inflate(stream.data.subarray(0, SAMPLE_INPUT_BYTES), budget);
    const decoded = sample && mayHoldObjects(sample) ? inflate(stream.data, budget) : sample;
    if (decoded) scanNames(decoded, found);
  }
}

/**
 * Whether the stream's first filter is Flate: as written before it, or, with no /Filter name there (an indirect
 * one, say), as its bytes begin (a zlib header).
 */
function isFlate(stream: StreamSection): boolean {
  const dictionary = withEscapesDecoded(stream.dictionary.toString("latin1"));
  const filter = [...dictionary.matchAll(/\/Filter[\s\0]*\[?[\s\0]*\/([^\s\0/[\]<>()%]+)/g)].at(-1)?.[1];
  if (filter) return filter === "FlateDecode" || filter === "Fl";
  const [cmf, flg] = stream.data;
  return cmf !== undefined && flg !== undefined && (cmf & 0x0f) === 8 && ((cmf << 8) | flg) % 31 === 0;
}

/** The inflated bytes (up to any damage, as readers show them), or null when they are not zlib data at all. */
function inflate(input: Buffer, budget: { left: number }): Buffer | null {
  if (budget.left <= 0) throw new ScanLimitExceeded();
  let output: Buffer;
  try {
    output = inflateSync(input, { finishFlush: zlibConstants.Z_SYNC_FLUSH, maxOutputLength: budget.left });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ERR_BUFFER_TOO_LARGE") {
      // It inflated the whole budget before giving up: that work is spent.
      budget.left = 0;
      throw new ScanLimitExceeded();
    }
    return null;
  }
  budget.left -= output.length;
  if (budget.left < 0) throw new ScanLimitExceeded();
  return output;
}

function withEscapesDecoded(name: string): string {
  return name.replace(/#([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
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
    const entry = FINDING_OF_NAME[withEscapesDecoded(bytes.subarray(slash + 1, end).toString("latin1"))];
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
