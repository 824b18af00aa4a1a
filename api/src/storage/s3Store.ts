/**
 * S3 backend (AWS S3 or any S3-compatible server: MinIO, Ceph, s3rver in tests). Objects keep the same keys as the
 * local backend; versions are separate keys (no bucket versioning needed). `put` refuses an existing key twice:
 * HeadObject first (a clear error, nothing uploaded), and `If-None-Match: *` on the PutObject itself, which makes
 * the write conditional on servers that support it (AWS S3, MinIO, R2) and closes the race between two writers.
 * Checksums are computed only when S3 requires them: with the SDK's default, streamed bodies get aws-chunked
 * framing that some S3-compatible servers store verbatim.
 */
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { Readable } from "node:stream";
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from "@aws-sdk/client-s3";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";
import { assertValidKey } from "./keys.ts";
import { StorageKeyExistsError, StoredFileNotFoundError } from "./storageErrors.ts";
import { checkLifetime, contentDisposition, sanitizeDownloadName } from "./signedUrl.ts";
import type { DocumentStore } from "./index.ts";

export interface S3StoreOptions {
  endpoint?: string;
  region: string;
  bucket: string;
  accessKeyId?: string;
  secretAccessKey?: string;
  forcePathStyle: boolean;
}

function status(error: unknown): number | undefined {
  return (error as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode;
}

function isMissing(error: unknown): boolean {
  const name = (error as { name?: string })?.name;
  return status(error) === 404 || name === "NotFound" || name === "NoSuchKey" || name === "NoSuchBucket";
}

export class S3DocumentStore implements DocumentStore {
  readonly backend = "s3" as const;
  readonly client: S3Client;
  readonly bucket: string;

  constructor(options: S3StoreOptions) {
    this.bucket = options.bucket;
    this.client = new S3Client({
      region: options.region,
      endpoint: options.endpoint,
      forcePathStyle: options.forcePathStyle,
      // Both or neither: without them the SDK's default chain applies (environment, instance or pod role).
      credentials:
        options.accessKeyId && options.secretAccessKey
          ? { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey }
          : undefined,
      requestChecksumCalculation: "WHEN_REQUIRED",
      responseChecksumValidation: "WHEN_REQUIRED",
    });
  }

  /** Creates the bucket when it does not exist; fails start-up with a clear message when it is not reachable. */
  async init(): Promise<void> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
      return;
    } catch (error) {
      if (!isMissing(error))
        throw new Error(`S3 bucket "${this.bucket}" is not accessible: ${describe(error)}`, { cause: error });
    }
    try {
      await this.client.send(new CreateBucketCommand({ Bucket: this.bucket }));
    } catch (error) {
      const name = (error as { name?: string }).name;
      if (name !== "BucketAlreadyOwnedByYou" && name !== "BucketAlreadyExists") {
        throw new Error(`S3 bucket "${this.bucket}" does not exist and could not be created: ${describe(error)}`, {
          cause: error,
        });
      }
    }
  }

  async put(key: string, sourceFile: string, contentType: string): Promise<void> {
    assertValidKey(key);
    if (await this.exists(key)) throw new StorageKeyExistsError(key);
    const { size } = await stat(sourceFile);
    try {
      await this.client.send(
        new PutObjectCommand({
          Bucket: this.bucket,
          Key: key,
          Body: createReadStream(sourceFile),
          ContentLength: size,
          ContentType: contentType,
          IfNoneMatch: "*",
        }),
      );
    } catch (error) {
      // 412: the conditional write lost to another writer of the same key.
      if (status(error) === 412 || (error as { name?: string }).name === "PreconditionFailed")
        throw new StorageKeyExistsError(key);
      throw error;
    }
  }

  async read(key: string): Promise<Readable> {
    assertValidKey(key);
    try {
      const result = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      const body = result.Body;
      if (body instanceof Readable) return body;
      if (body && typeof (body as { transformToWebStream?: unknown }).transformToWebStream === "function") {
        return Readable.fromWeb((body as { transformToWebStream(): ReadableStream }).transformToWebStream() as never);
      }
      throw new Error(`S3 returned no body for ${key}`);
    } catch (error) {
      if (isMissing(error)) throw new StoredFileNotFoundError();
      throw error;
    }
  }

  async exists(key: string): Promise<boolean> {
    assertValidKey(key);
    try {
      await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return true;
    } catch (error) {
      if (isMissing(error)) return false;
      throw error;
    }
  }

  /** Deleting a missing key is not an error (S3 semantics). */
  async delete(key: string): Promise<void> {
    assertValidKey(key);
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
  }

  /** A presigned GET; the download name (if any) becomes the response's Content-Disposition. */
  async signedUrl(
    key: string,
    expiresInSeconds: number,
    downloadName?: string,
  ): Promise<{ url: string; expiresAt: Date }> {
    assertValidKey(key);
    checkLifetime(expiresInSeconds);
    const signedAt = new Date(Math.floor(Date.now() / 1000) * 1000);
    const name = sanitizeDownloadName(downloadName);
    const command = new GetObjectCommand({
      Bucket: this.bucket,
      Key: key,
      ...(name ? { ResponseContentDisposition: contentDisposition(name) } : {}),
    });
    const url = await getSignedUrl(this.client, command, { expiresIn: expiresInSeconds, signingDate: signedAt });
    return { url, expiresAt: new Date(signedAt.getTime() + expiresInSeconds * 1000) };
  }

  close(): void {
    this.client.destroy();
  }
}

function describe(error: unknown): string {
  if (error instanceof S3ServiceException)
    return `${error.name} (HTTP ${status(error) ?? "?"})${error.message && error.message !== "UnknownError" ? `: ${error.message}` : ""}`;
  return (error as Error)?.message ?? String(error);
}
