/**
 * Document storage: one interface, two backends (STORAGE_BACKEND=local|s3). Every document version is stored
 * immutably under its own key (keys.ts); `put` refuses an existing key with 409 FILE_EXISTS. Downloads go through
 * short-lived signed URLs: S3 presigned GETs, or for the local backend URLs signed with FILE_URL_SECRET and served by
 * `GET /api/v1/files/{token}` (signedUrl.ts describes the format).
 *
 * Uploads: `parseUpload` (multipartUpload.ts) streams the multipart body to a temp file with its SHA-256, then
 * `checkUpload` (fileSignature.ts) decides the type from the bytes, then `store.put` copies the temp file in.
 */
import type { Readable } from "node:stream";
import { z } from "zod/v4";
import type { Config } from "../config.ts";
import { developmentSecret } from "../developmentSecrets.ts";
import { AppError, notFound } from "../errors.ts";
import { defineRoute, ErrorSchema, type RouteDefinition } from "../http/routeTable.ts";
import path from "node:path";
import { LocalDocumentStore } from "./localStore.ts";
import { S3DocumentStore } from "./s3Store.ts";
import { contentDisposition } from "./signedUrl.ts";

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
    (config.nodeEnv === "production"
      ? undefined
      : await developmentSecret(config.dataDir, "file-url.key"));
  if (!secretHex) throw new Error("FILE_URL_SECRET is required in production with local storage");
  const store = new LocalDocumentStore({
    root: path.join(config.dataDir, "files"),
    secret: Buffer.from(secretHex.replace(/^0x/, ""), "hex"),
    publicBaseUrl: config.publicBaseUrl ?? `http://${config.host}:${config.port}`,
  });
  await store.init();
  return store;
}

/**
 * `GET /api/v1/files/{token}`: the local backend's signed downloads. Public: the signature is the credential.
 * A tampered, incomplete or expired URL → 403 FORBIDDEN; a deleted file → 404; with the S3 backend → 404 (S3 serves
 * its own presigned URLs).
 */
export function fileRoutes(store: DocumentStore, _config: Config): RouteDefinition[] {
  return [
    defineRoute({
      method: "get",
      path: "/files/:token",
      operationId: "downloadFile",
      summary: "Download a stored document through a signed URL",
      description:
        "Served only with local storage; the URL comes from an API response and expires. The response has the document's stored content type and `Content-Disposition: attachment`.",
      tags: ["Files"],
      access: [{ kind: "public" }],
      params: z.object({ token: z.string() }),
      query: z.object({
        // Anything malformed (missing, repeated) becomes undefined, so it fails the signature check: 403, not 400.
        expires: z.string().optional().catch(undefined).meta({ description: "Unix time (seconds) after which the URL is refused" }),
        name: z.string().optional().catch(undefined).meta({ description: "Download file name" }),
        signature: z.string().optional().catch(undefined).meta({ description: "HMAC-SHA256 (hex) of the key, expiry and name" }),
      }),
      responses: {
        200: { description: "The file's bytes", contentType: "application/octet-stream", schema: z.string().meta({ format: "binary" }) },
        403: { description: "Invalid or expired link", schema: ErrorSchema },
        404: { description: "No such file (or storage is not local)", schema: ErrorSchema },
      },
      handler: async ({ params, query, ctx }) => {
        if (!(store instanceof LocalDocumentStore)) throw notFound("File");
        const check = store.verifyUrl(params.token, query);
        if (!check.ok) {
          throw new AppError(
            403,
            "FORBIDDEN",
            check.reason === "EXPIRED" ? "This download link has expired" : "This download link is invalid",
          );
        }
        const file = await store.open(check.key);
        const headers = {
          "Content-Type": file.contentType,
          "Content-Length": String(file.size),
          "Content-Disposition": contentDisposition(check.downloadName),
          "X-Content-Type-Options": "nosniff",
          "Cache-Control": "private, no-store",
        };
        // Koa never reads (nor closes) a HEAD response's body stream: close the file now.
        if (ctx.method === "HEAD") {
          file.stream.destroy();
          return { status: 200, headers };
        }
        return { status: 200, body: file.stream, headers };
      },
    }),
  ];
}

export { LocalDocumentStore } from "./localStore.ts";
export { S3DocumentStore } from "./s3Store.ts";
export { documentVersionKey, isValidKey, InvalidStorageKeyError } from "./keys.ts";
export * from "./storageErrors.ts";
export { checkUpload, type CheckedFile } from "./fileSignature.ts";
export { parseUpload, type ParsedUpload, type UploadedFile } from "./multipartUpload.ts";
