/**
 * Streaming multipart upload of ONE document (formidable 3, on the raw request: the app's koa-body has multipart
 * off). The file goes to a fresh directory under `tmpDir` (random file name, never the client's), its SHA-256 is
 * computed while it streams, and its size is limited while it streams.
 *
 * Errors (storageErrors.ts; the error middleware answers them with the {code, message, details?} body):
 * - 413 PAYLOAD_TOO_LARGE: Content-Length above maxBytes + 64 KiB (refused before reading a byte), or the raw
 *   body passing maxBytes + 64 KiB while streaming whatever its framing (chunked or lying requests), or the file
 *   passing maxBytes;
 * - 431-like limits answered 400 VALIDATION_ERROR (details.reason): a part's headers over 16 KiB
 *   (PART_HEADERS_TOO_LARGE), more than 16 header lines in a part, or more than MAX_PARTS parts (TOO_MANY_PARTS),
 *   counted while the parser reads them (formidable itself accumulates part headers without limit);
 * - 415 UNSUPPORTED_MEDIA_TYPE: the request is not multipart/form-data;
 * - 400 VALIDATION_ERROR: the request's shape is wrong: malformed multipart (no boundary, truncated body), no file
 *   part in the file field, more than one file, a file in another field, a text field given twice, too many or too
 *   large text fields (details.issues like the route table's validation errors, or details.reason);
 * - the file's content (empty, wrong type, disguised) is judged afterwards by `checkUpload` (400 INVALID_FILE).
 * On any error every temp file is deleted before the error is thrown, and what the client still sends is read and
 * discarded for a bounded time and size (a lingering close, `discardRest`). On success the caller owns the temp file
 * and must call `cleanup()` when done (in a `finally`), after `store.put` has copied it.
 */
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import path from "node:path";
import type { IncomingMessage, ServerResponse } from "node:http";
import formidable from "formidable";
import { InvalidUploadError, StorageError, UploadNotMultipartError, UploadTooLargeError } from "./storageErrors.ts";
import { isStorableText } from "../encoding/storableText.ts";

/** Room for multipart boundaries, part headers and small text fields on top of the file itself. */
export const MULTIPART_ALLOWANCE_BYTES = 64 * 1024;
const MAX_FIELDS = 32;
const MAX_FIELDS_BYTES = 32 * 1024;
/** Per part: the bytes of its header lines, and how many lines. */
export const MAX_PART_HEADER_BYTES = 16 * 1024;
const MAX_PART_HEADER_LINES = 16;
/**
 * Parts of any kind, counted as each begins (before its content is read). A document form has three (file, docType,
 * description); the rest is room for a client's extra parts. Below formidable's own field limit (MAX_FIELDS, counted
 * as each field ends), so that it is this count that stops a form of many small parts.
 */
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
  /** Largest accepted file, in bytes (MAX_UPLOAD_BYTES). */
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
  /** The part's Content-Type (untrusted); "application/octet-stream" when the part had none. */
  declaredType: string | null;
}

export interface ParsedUpload {
  file: UploadedFile;
  /** Text fields of the form (each at most once). */
  fields: Record<string, string>;
  /** Deletes the temp file and its directory; safe to call twice. */
  cleanup(): Promise<void>;
}

function tooLarge(maxBytes: number): UploadTooLargeError {
  return new UploadTooLargeError(maxBytes);
}

function limitExceeded(message: string, reason: string): InvalidUploadError {
  return new InvalidUploadError(message, { reason });
}

type FormidableInternals = ReturnType<typeof formidable> & {
  write(buffer: Buffer): number | null;
  _error(error: unknown): void;
  _parser?: NodeJS.EventEmitter;
};

/**
 * Limits formidable does not have, enforced on what it is fed: the raw bytes of the body (any framing), the size and
 * count of each part's header lines, and the number of parts. A limit stops the parse with an error at once.
 */
function guardStream(form: ReturnType<typeof formidable>, maxBytes: number): void {
  const internals = form as FormidableInternals;
  const write = internals.write.bind(form);
  let received = 0;
  let watching = false;
  let parts = 0;
  let headerBytes = 0;
  let headerLines = 0;
  const stop = (error: StorageError) => internals._error(error);
  internals.write = (buffer: Buffer) => {
    received += buffer.length;
    if (received > maxBytes + MULTIPART_ALLOWANCE_BYTES) {
      stop(tooLarge(maxBytes));
      return null;
    }
    if (!watching && internals._parser) {
      watching = true;
      internals._parser.on("data", ({ name, start, end }: { name: string; start?: number; end?: number }) => {
        if (name === "partBegin") {
          headerBytes = 0;
          headerLines = 0;
          if (++parts > MAX_PARTS) stop(limitExceeded(`At most ${MAX_PARTS} parts are accepted`, "TOO_MANY_PARTS"));
        } else if (name === "headerField" || name === "headerValue") {
          headerBytes += (end ?? 0) - (start ?? 0);
          if (headerBytes > MAX_PART_HEADER_BYTES)
            stop(
              limitExceeded(
                `A part's headers may hold at most ${MAX_PART_HEADER_BYTES} bytes`,
                "PART_HEADERS_TOO_LARGE",
              ),
            );
        } else if (name === "headerEnd" && ++headerLines > MAX_PART_HEADER_LINES) {
          stop(
            limitExceeded(`A part may have at most ${MAX_PART_HEADER_LINES} header lines`, "PART_HEADERS_TOO_LARGE"),
          );
        }
      });
    }
    return write(buffer);
  };
}

function shapeError(message: string, field: string): InvalidUploadError {
  return new InvalidUploadError(message, { issues: [{ in: "body", path: field, message }] });
}

/** Formidable's errors (see formidable/src/FormidableError.js) as the API's errors. */
function mapFormidableError(error: unknown, maxBytes: number, fileField: string): StorageError {
  if (error instanceof StorageError) return error;
  const code = (error as { code?: unknown }).code;
  switch (code) {
    case 1009: // biggerThanTotalMaxFileSize (checked while streaming)
    case 1016: // biggerThanMaxFileSize (checked at the end of a part)
      return tooLarge(maxBytes);
    case 1015: // maxFilesExceeded
      return shapeError("Send exactly one file", fileField);
    case 1006: // maxFieldsSizeExceeded
      return new InvalidUploadError(`Text fields may hold at most ${MAX_FIELDS_BYTES} bytes in all`, {
        reason: "FIELDS_TOO_LARGE",
      });
    case 1007: // maxFieldsExceeded
      return new InvalidUploadError(`At most ${MAX_FIELDS} text fields are accepted`, { reason: "TOO_MANY_FIELDS" });
    case 1002: // aborted
      return new InvalidUploadError("The upload was aborted before it was complete", { reason: "ABORTED" });
    case 1003: // noParser (content type formidable does not know)
      return unsupportedMediaType();
    default:
      // 1011 missing content type, 1012 malformed, 1013 no boundary, 1014 transfer encoding, parser errors.
      return new InvalidUploadError("The request body is not valid multipart/form-data", {
        reason: "MALFORMED_MULTIPART",
      });
  }
}

function unsupportedMediaType(): UploadNotMultipartError {
  return new UploadNotMultipartError();
}

/**
 * Parses a multipart request with exactly one file in `fileField`. See the module comment for the errors. Takes the
 * plain Node request (its headers and its body stream), whatever framework received it.
 */
export async function parseUpload(req: IncomingMessage, options: UploadOptions): Promise<ParsedUpload> {
  const { maxBytes, tmpDir } = options;
  const fileField = options.fileField ?? "file";
  refuseBeforeReading(req, options.response, maxBytes);
  const { dir, cleanup } = await uploadDirectory(tmpDir);
  try {
    const form = createForm(dir, maxBytes, fileField);
    const [fields, files] = await readForm(form, req, options.response, maxBytes, fileField);
    const file = theOneFile(files, fileField);
    return { file: uploadedFile(file, fileField), fields: textFieldsOf(fields), cleanup };
  } catch (error) {
    await cleanup();
    throw error;
  }
}

/** Before reading anything: the media type and the announced length (the body is then discarded, bounded). */
function refuseBeforeReading(req: IncomingMessage, response: ServerResponse, maxBytes: number): void {
  const announced = req.headers["content-length"];
  let refusal: StorageError | undefined;
  if (!/^multipart\/form-data\s*(;|$)/i.test(req.headers["content-type"] ?? "")) refusal = unsupportedMediaType();
  else if (announced !== undefined && Number(announced) > maxBytes + MULTIPART_ALLOWANCE_BYTES)
    refusal = tooLarge(maxBytes);
  if (refusal) {
    discardRest(req, response);
    throw refusal;
  }
}

/** A directory of the upload's own, removed whole on error or by cleanup(). */
async function uploadDirectory(tmpDir: string): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  await mkdir(tmpDir, { recursive: true, mode: 0o700 });
  const dir = await mkdtemp(path.join(tmpDir, "upload-"));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** Formidable with our limits, the stream guard, and a part in the file field always taken as a file. */
function createForm(dir: string, maxBytes: number, fileField: string): ReturnType<typeof formidable> {
  const form = formidable({
    uploadDir: dir,
    keepExtensions: false,
    hashAlgorithm: "sha256",
    maxFiles: 1,
    maxFileSize: maxBytes,
    maxTotalFileSize: maxBytes, // checked on every chunk, unlike maxFileSize (checked at the end of the part)
    allowEmptyFiles: true, // checkUpload answers INVALID_FILE "empty" with the other content checks
    minFileSize: 0,
    maxFields: MAX_FIELDS,
    maxFieldsSize: MAX_FIELDS_BYTES,
  });
  guardStream(form, maxBytes);
  // Formidable treats a part without Content-Type as a text field (buffered in memory). A part in the file field or
  // with a file name is a file, whatever headers it lacks.
  const handlePart = form._handlePart.bind(form);
  form.onPart = (part) => {
    if (!part.mimetype && (part.name === fileField || typeof part.originalFilename === "string")) {
      (part as { mimetype: string | null }).mimetype = "application/octet-stream";
    }
    return handlePart(part);
  };
  return form;
}

/** Streams the body through the form; a failure becomes a storage error, and the rest of the body is discarded. */
async function readForm(
  form: ReturnType<typeof formidable>,
  req: IncomingMessage,
  response: ServerResponse,
  maxBytes: number,
  fileField: string,
): Promise<[formidable.Fields, formidable.Files]> {
  try {
    return await form.parse(req);
  } catch (error) {
    discardRest(req, response);
    throw mapFormidableError(error, maxBytes, fileField);
  }
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

/** Exactly one file, in the file field. */
function theOneFile(files: formidable.Files, fileField: string): formidable.File {
  const fileFields = Object.entries(files).filter(([, list]) => (list?.length ?? 0) > 0);
  const other = fileFields.find(([name]) => name !== fileField);
  if (other)
    throw shapeError(`Unexpected file in field "${other[0]}": send the document in the "${fileField}" field`, other[0]);
  const uploaded = files[fileField] ?? [];
  if (uploaded.length === 0) throw shapeError(`A file is required in the multipart field "${fileField}"`, fileField);
  if (uploaded.length > 1) throw shapeError("Send exactly one file", fileField);
  return uploaded[0]!;
}

/** The text fields, each given at most once. */
function textFieldsOf(fields: formidable.Fields): Record<string, string> {
  const textFields: Record<string, string> = {};
  for (const [name, values] of Object.entries(fields)) {
    if (!values || values.length === 0) continue;
    if (values.length > 1) throw shapeError(`Field "${name}" was given more than once`, name);
    // Stored in Postgres (description) or echoed: NUL and unpaired surrogates are refused like in JSON bodies.
    if (!isStorableText(name) || !isStorableText(values[0]!))
      throw shapeError(`Field ${JSON.stringify(name)} must not contain NUL characters`, name);
    textFields[name] = values[0]!;
  }
  return textFields;
}

/** The file as the caller sees it, with the SHA-256 formidable computed while it streamed. */
function uploadedFile(file: formidable.File, fileField: string): UploadedFile {
  if (file.originalFilename && !isStorableText(file.originalFilename))
    throw shapeError("The file name must not contain NUL characters", fileField);
  const sha256 = typeof file.hash === "string" ? file.hash : undefined;
  if (!sha256) throw new Error("formidable did not compute the upload's SHA-256");
  return {
    path: file.filepath,
    size: file.size,
    sha256,
    originalFilename: file.originalFilename ?? null,
    declaredType: file.mimetype ?? null,
  };
}
