/**
 * What storage refuses, by kind. Each error carries the spec's error code and the details a client needs, but no
 * HTTP status: http/errorKinds.ts gives each kind its status.
 */
export abstract class StorageError extends Error {
  /** The spec's error code (PAYLOAD_TOO_LARGE, VALIDATION_ERROR, INVALID_FILE, …). */
  abstract readonly code: string;
  readonly details?: Record<string, unknown>;

  constructor(message: string, details?: Record<string, unknown>) {
    super(message);
    this.name = new.target.name;
    this.details = details;
  }
}

/** The upload (announced or streamed) is larger than allowed. */
export class UploadTooLargeError extends StorageError {
  readonly code = "PAYLOAD_TOO_LARGE";

  constructor(maxBytes: number) {
    super(`The file is larger than the allowed ${formatBytes(maxBytes)}`, { maxBytes });
  }
}

/** The request is not multipart/form-data. */
export class UploadNotMultipartError extends StorageError {
  readonly code = "UNSUPPORTED_MEDIA_TYPE";

  constructor() {
    super("Send the document as multipart/form-data");
  }
}

/** The form's shape or framing is wrong (details.issues like request validation, or details.reason). */
export class InvalidUploadError extends StorageError {
  readonly code = "VALIDATION_ERROR";
}

/** The file's content is refused: empty, not an accepted type, or disguised as another (details.reason). */
export class InvalidFileError extends StorageError {
  readonly code = "INVALID_FILE";
}

/** `put` refuses a key that already holds an object: stored versions are immutable. */
export class StorageKeyExistsError extends StorageError {
  readonly code = "FILE_EXISTS";
  readonly key: string;

  constructor(key: string) {
    super("A file is already stored under this key; stored files are never overwritten", { key });
    this.key = key;
  }
}

/** No file is stored under the key. */
export class StoredFileNotFoundError extends StorageError {
  readonly code = "NOT_FOUND";

  constructor() {
    super("File not found");
  }
}

function formatBytes(bytes: number): string {
  if (bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MB (${bytes} bytes)`;
  return `${bytes} bytes`;
}
