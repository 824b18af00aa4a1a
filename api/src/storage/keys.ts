/**
 * Storage keys: the names objects are stored under, identical for both backends. A key is 1 to 8 segments joined
 * by "/", each segment starting with a letter or digit and containing only letters, digits, ".", "_" and "-" (at
 * most 128 characters each, 512 in all). So a key can never be absolute, contain "..", ".", "//", a backslash or a
 * control character: it cannot leave the storage directory and it is the same string in a URL, a file path and S3.
 * Every document version is stored under its own key and never overwritten.
 */
const SEGMENT = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
export const MAX_KEY_LENGTH = 512;
const MAX_SEGMENTS = 8;

export function isValidKey(key: unknown): key is string {
  if (typeof key !== "string" || key.length === 0 || key.length > MAX_KEY_LENGTH) return false;
  const segments = key.split("/");
  return segments.length <= MAX_SEGMENTS && segments.every((segment) => SEGMENT.test(segment));
}

/** Throws (a programming error: keys are built by the API, never taken from a client) when the key is not valid. */
export function assertValidKey(key: string): void {
  if (!isValidKey(key)) throw new InvalidStorageKeyError(key);
}

export class InvalidStorageKeyError extends Error {
  constructor(key: unknown) {
    super(
      `Invalid storage key ${JSON.stringify(String(key).slice(0, 80))}: segments of [A-Za-z0-9._-] starting with a letter or digit, joined by "/"`,
    );
    this.name = "InvalidStorageKeyError";
  }
}

/**
 * The recommended key of one stored document version: `documents/<ownerId>/<documentId>/v<version>.<extension>`,
 * e.g. `documents/7f9c…/3b1d…/v2.pdf`. Ids must be key-safe (UUIDs, hex hashes); the extension comes from
 * `checkUpload` (the detected type, not the client's file name).
 */
export function documentVersionKey(ownerId: string, documentId: string, version: number, extension: string): string {
  if (!Number.isInteger(version) || version < 1)
    throw new Error(`document version must be a positive integer (got ${version})`);
  const key = `documents/${ownerId}/${documentId}/v${version}.${extension}`;
  assertValidKey(key);
  return key;
}
