/**
 * Streaming multipart upload of ONE document (busboy, on the raw request: the app's koa-body has multipart off).
 * The file goes to a fresh directory under `tmpDir` (random file name, never the client's), its SHA-256 is computed
 * while it streams, and its size is limited while it streams.
 *
 * Errors (storageErrors.ts; the error middleware answers them with the {code, message, details?} body):
 * - 413 PAYLOAD_TOO_LARGE: Content-Length above maxBytes + 64 KiB (refused before reading a byte), or the raw
 *   body passing maxBytes + 64 KiB while streaming whatever its framing (chunked or lying requests), or the file
 *   passing maxBytes;
 * - 400 VALIDATION_ERROR with details.reason: a part's headers over 16 KiB or malformed (PART_HEADERS_TOO_LARGE:
 *   busboy reports both as one error), more than MAX_PARTS parts (TOO_MANY_PARTS), too many or too large text fields
 *   (TOO_MANY_FIELDS, FIELDS_TOO_LARGE), a malformed or truncated body (MALFORMED_MULTIPART), an aborted upload;
 * - 415 UNSUPPORTED_MEDIA_TYPE: the request is not multipart/form-data;
 * - 400 VALIDATION_ERROR with details.issues: no file part in the file field, more than one file, a file in another
 *   field, a text field given twice or holding NUL.
 * - the file's content (empty, wrong type, disguised) is judged afterwards by `checkUpload` (400 INVALID_FILE).
 * A part is a file when it has a file name or is application/octet-stream (busboy's rule, after RFC 7578); a part
 * without Content-Type is text/plain. On any error the temp file is closed and deleted before the error is thrown,
 * and what the client still sends is read and discarded for a bounded time and size (a lingering close,
 * `discardRest`). On success the caller owns the temp file and must call `cleanup()` when done (in a `finally`),
 * after `store.put` has copied it.
 */
import { createHash, randomUUID } from "node:crypto";
import { createWriteStream } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import busboy from "busboy";
import { InvalidUploadError, StorageError, UploadNotMultipartError, UploadTooLargeError } from "./storageErrors.ts";
import { isStorableText } from "../encoding/storableText.ts";

/** Room for multipart boundaries, part headers and small text fields on top of the file itself. */
export const MULTIPART_ALLOWANCE_BYTES = 64 * 1024;
const MAX_FIELDS = 32;
const MAX_FIELDS_BYTES = 32 * 1024;
/** Per part, the bytes of its header lines: busboy's own fixed limit. */
export const MAX_PART_HEADER_BYTES = 16 * 1024;
/** Parts of any kind. A document form has three (file, docType, description); the rest is room for extra parts. */
export const MAX_PARTS = 16;
/**
 * After a refusal, what is still read (and discarded) so the client gets the answer instead of a reset: up to
 * LINGER_BYTES, then reading pauses; the connection is closed LINGER_MS after the answer has gone out. 16 MiB
 * drains the whole of any body a client sends by mistake (an 11 MB file), so its connection stays usable: a
 * keep-alive client (undici) queues its next request on it, which a cut-off would reset.
 */
const LINGER_BYTES = 16 * 1024 * 1024;
const LINGER_MS = 2_000;

export interface UploadOptions {
  /** The request's response: after a refusal the connection is closed only once the answer has gone out. */
  response: ServerResponse;
  /** Largest accepted file, in bytes (10 MiB: config.ts). */
  maxBytes: number;
  /** Directory for temp files (created if missing); each upload gets its own subdirectory. */
  tmpDir: string;
  /** Multipart field carrying the file. */
  fileField?: string;
}

export interface UploadedFile {
  /** Temp file holding the bytes; deleted by `cleanup()`. */
  path: string;
  size: number;
  /** Lowercase hex SHA-256 of the bytes, computed while streaming. */
  sha256: string;
  /** The client's file name (untrusted, for display only), or null. */
  originalFilename: string | null;
  /** The part's Content-Type (untrusted); "text/plain" when the part had none. */
  declaredType: string | null;
}

export interface ParsedUpload {
  file: UploadedFile;
  /** Text fields of the form (each at most once). */
  fields: Record<string, string>;
  /** Deletes the temp file and its directory; safe to call twice. */
  cleanup(): Promise<void>;
}

const limitExceeded = (message: string, reason: string) => new InvalidUploadError(message, { reason });
const shapeError = (message: string, field: string) =>
  new InvalidUploadError(message, { issues: [{ in: "body", path: field, message }] });
const malformed = () => limitExceeded("The request body is not valid multipart/form-data", "MALFORMED_MULTIPART");

/**
 * Parses a multipart request with exactly one file in `fileField`. See the module comment for the errors. Takes the
 * plain Node request (its headers and its body stream), whatever framework received it.
 */
export async function parseUpload(req: IncomingMessage, options: UploadOptions): Promise<ParsedUpload> {
  const { maxBytes, tmpDir, response } = options;
  const fileField = options.fileField ?? "file";
  const announced = req.headers["content-length"];
  let refusal: StorageError | undefined;
  if (!/^multipart\/form-data\s*(;|$)/i.test(req.headers["content-type"] ?? ""))
    refusal = new UploadNotMultipartError();
  else if (announced !== undefined && Number(announced) > maxBytes + MULTIPART_ALLOWANCE_BYTES)
    refusal = new UploadTooLargeError(maxBytes);
  if (refusal) {
    discardRest(req, response);
    throw refusal;
  }
  await mkdir(tmpDir, { recursive: true, mode: 0o700 });
  const dir = await mkdtemp(path.join(tmpDir, "upload-"));
  const cleanup = () => rm(dir, { recursive: true, force: true });
  try {
    const form = await readForm(req, dir, maxBytes, fileField);
    return { ...theOneFileAndFields(form, fileField), cleanup };
  } catch (error) {
    discardRest(req, response);
    await cleanup();
    throw error;
  }
}

interface ReadForm {
  file?: UploadedFile;
  /** The first file sent in another field (not stored). */
  fileElsewhere?: string;
  fields: Map<string, string[]>;
}

/**
 * Streams the body through busboy with our limits, the file to `dir`. A limit or a parse error stops reading at once,
 * and the temp file is closed before the promise rejects.
 */
function readForm(req: IncomingMessage, dir: string, maxBytes: number, fileField: string): Promise<ReadForm> {
  return new Promise((resolve, reject) => {
    let form: busboy.Busboy;
    try {
      form = busboy({
        headers: req.headers,
        defParamCharset: "utf8", // file and field names as browsers send them
        // fileSize and fieldSize one above what is accepted: busboy flags a part that REACHES its limit.
        limits: {
          fileSize: maxBytes + 1,
          files: 1,
          fields: MAX_FIELDS,
          fieldSize: MAX_FIELDS_BYTES + 1,
          parts: MAX_PARTS + 1,
        },
      });
    } catch {
      return reject(malformed()); // no boundary
    }
    const read: ReadForm = { fields: new Map() };
    let writing: Promise<void> = Promise.resolve();
    let received = 0;
    let fieldBytes = 0;
    let settled = false;
    const fail = (error: StorageError) => {
      if (settled) return;
      settled = true;
      req.unpipe(form);
      form.destroy(); // ends the file part: the write stream closes, then the temp directory can go
      void writing.catch(() => {}).then(() => reject(error));
    };

    form.on("file", (name, stream, info) => {
      if (name !== fileField) {
        read.fileElsewhere ??= name;
        return void stream.resume();
      }
      const filePath = path.join(dir, randomUUID());
      const hash = createHash("sha256");
      let size = 0;
      stream.on("data", (chunk: Buffer) => {
        hash.update(chunk);
        size += chunk.length;
      });
      stream.on("limit", () => fail(new UploadTooLargeError(maxBytes)));
      writing = pipeline(stream, createWriteStream(filePath, { flags: "wx", mode: 0o600 })).then(() => {
        read.file = {
          path: filePath,
          size,
          sha256: hash.digest("hex"),
          originalFilename: info.filename ?? null,
          declaredType: info.mimeType,
        };
      });
      writing.catch(() => fail(malformed()));
    });
    form.on("field", (name, value, info) => {
      fieldBytes += Buffer.byteLength(value);
      if (info.valueTruncated || fieldBytes > MAX_FIELDS_BYTES)
        return fail(limitExceeded(`Text fields may hold at most ${MAX_FIELDS_BYTES} bytes in all`, "FIELDS_TOO_LARGE"));
      read.fields.set(name, [...(read.fields.get(name) ?? []), value]);
    });
    form.on("filesLimit", () => fail(shapeError("Send exactly one file", fileField)));
    form.on("fieldsLimit", () =>
      fail(limitExceeded(`At most ${MAX_FIELDS} text fields are accepted`, "TOO_MANY_FIELDS")),
    );
    form.on("partsLimit", () => fail(limitExceeded(`At most ${MAX_PARTS} parts are accepted`, "TOO_MANY_PARTS")));
    form.on("error", (error: Error) =>
      fail(
        error.message === "Malformed part header"
          ? limitExceeded(
              `A part's headers must be well-formed and hold at most ${MAX_PART_HEADER_BYTES} bytes`,
              "PART_HEADERS_TOO_LARGE",
            )
          : malformed(),
      ),
    );
    // Once the body is read and the file written (a failed write has called `fail`).
    form.on("close", () =>
      writing.then(
        () => {
          if (settled) return;
          settled = true;
          resolve(read);
        },
        () => {},
      ),
    );
    // The raw bytes, whatever their framing: a preamble before the first boundary reaches no busboy limit.
    req.on("data", (chunk: Buffer) => {
      received += chunk.length;
      if (received > maxBytes + MULTIPART_ALLOWANCE_BYTES) fail(new UploadTooLargeError(maxBytes));
    });
    req.once("close", () => {
      if (!req.complete) fail(limitExceeded("The upload was aborted before it was complete", "ABORTED"));
    });
    req.pipe(form);
  });
}

/** Exactly one file, in the file field, and the text fields, each given once and storable. */
function theOneFileAndFields(read: ReadForm, fileField: string): Omit<ParsedUpload, "cleanup"> {
  if (read.fileElsewhere !== undefined)
    throw shapeError(
      `Unexpected file in field "${read.fileElsewhere}": send the document in the "${fileField}" field`,
      read.fileElsewhere,
    );
  if (!read.file) throw shapeError(`A file is required in the multipart field "${fileField}"`, fileField);
  const fields: Record<string, string> = {};
  for (const [name, values] of read.fields) {
    if (values.length > 1) throw shapeError(`Field "${name}" was given more than once`, name);
    // Stored in Postgres (description) or echoed: NUL and unpaired surrogates are refused like in JSON bodies.
    if (!isStorableText(name) || !isStorableText(values[0]!))
      throw shapeError(`Field ${JSON.stringify(name)} must not contain NUL characters`, name);
    fields[name] = values[0]!;
  }
  if (read.file.originalFilename && !isStorableText(read.file.originalFilename))
    throw shapeError("The file name must not contain NUL characters", fileField);
  return { file: read.file, fields };
}

/**
 * A lingering close. A connection closed while the client is still sending is reset, and a reset throws away what
 * the server had not yet sent: the client sees "EPIPE" or "ECONNRESET" instead of our answer. So what the client
 * still sends is read and discarded while the answer goes out; past LINGER_BYTES reading pauses (the client's
 * writes then wait), and a body still unfinished LINGER_MS after the answer has gone out (an endless chunked body,
 * a client that never reads) is cut off then, never before the answer. Also for a refusal decided before the body
 * was read at all (the caller may not upload there).
 */
export function discardRest(req: IncomingMessage, response: ServerResponse): void {
  if (req.complete || req.destroyed) return;
  let left = LINGER_BYTES;
  let timer: NodeJS.Timeout | undefined;
  const cutOffLater = () => {
    if (req.complete || req.destroyed) return;
    timer = setTimeout(() => req.socket?.destroy(), LINGER_MS);
    timer.unref();
  };
  if (response.writableFinished) cutOffLater();
  else response.once("finish", cutOffLater);
  const done = () => clearTimeout(timer);
  req.on("data", (chunk: Buffer) => {
    left -= chunk.length;
    if (left < 0) req.pause();
  });
  req.once("end", done);
  req.once("close", done);
  req.resume();
}
