/**
 * Document storage: one interface, two backends (STORAGE_BACKEND=local|s3). Every document version is stored
 * immutably under its own key (keys.ts); `put` refuses an existing key with 409 FILE_EXISTS. Downloads go through
 * short-lived signed URLs: S3 presigned GETs, or for the local backend URLs signed with FILE_URL_SECRET and served by
 * `GET /api/v1/files/{token}` (routes/files.ts; signedUrl.ts describes the format).
 *
 * Uploads: `parseUpload` (multipartUpload.ts) streams the multipart body to a temp file with its SHA-256, then
 * `checkUpload` (fileSignature.ts) decides the type from the bytes, then `store.put` copies the temp file in.
 */
import type { Readable } from "node:stream";
import type { Config } from "../config.ts";
import { developmentSecret } from "../developmentSecrets.ts";
import path from "node:path";
import { LocalDocumentStore } from "./localStore.ts";
import { S3DocumentStore } from "./s3Store.ts";

export interface DocumentStore {
  readonly backend: "local" | "s3";
  /** Stores a copy of `sourceFile` under `key`; StorageKeyExistsError (409 FILE_EXISTS) when the key is taken. */
  put(key: string, sourceFile: string, contentType: string): Promise<void>;
  /** The stored bytes; StoredFileNotFoundError (404 NOT_FOUND) when missing. */
  read(key: string): Promise<Readable>;
  exists(key: string): Promise<boolean>;
  /** Removes an object (e.g. when anchoring its hash on chain failed); missing keys are not an error. */
  delete(key: string): Promise<void>;
  /** A URL anyone holding it can download the file from until `expiresAt` (1 s to 7 days). */
  signedUrl(key: string, expiresInSeconds: number, downloadName?: string): Promise<{ url: string; expiresAt: Date }>;
}

export async function createDocumentStore(config: Config): Promise<DocumentStore> {
  if (config.storageBackend === "s3") {
    const store = new S3DocumentStore({
      endpoint: config.s3Endpoint,
      region: config.s3Region,
      bucket: config.s3Bucket,
      accessKeyId: config.s3AccessKeyId,
      secretAccessKey: config.s3SecretAccessKey,
      forcePathStyle: config.s3ForcePathStyle,
    });
    await store.init();
    return store;
  }
  const secretHex =
    config.fileUrlSecret ??
    (config.nodeEnv === "production" ? undefined : await developmentSecret(config.dataDir, "file-url.key"));
  if (!secretHex) throw new Error("FILE_URL_SECRET is required in production with local storage");
  const store = new LocalDocumentStore({
    root: path.join(config.dataDir, "files"),
    secret: Buffer.from(secretHex.replace(/^0x/, ""), "hex"),
    publicBaseUrl: config.publicBaseUrl ?? `http://${config.host}:${config.port}`,
  });
  await store.init();
  return store;
}

export { LocalDocumentStore } from "./localStore.ts";
export { S3DocumentStore } from "./s3Store.ts";
export { documentVersionKey, isValidKey, InvalidStorageKeyError } from "./keys.ts";
export * from "./storageErrors.ts";
export { checkUpload, type CheckedFile } from "./fileSignature.ts";
export { parseUpload, type ParsedUpload, type UploadedFile } from "./multipartUpload.ts";
