/**
 * Local backend: files under DATA_DIR/files.
 *
 *   files/<key>              the bytes (mode 0600), never overwritten
 *   files/.meta/<key>.json   {contentType, size, storedAt}
 *   files/.tmp/              copies in progress
 *
 * Keys' segments start with a letter or digit, so no key reaches `.meta` or `.tmp`. `put` copies the source into
 * `.tmp`, fsyncs it, then publishes it with link(2), which fails when the name exists (an atomic "rename unless
 * taken": rename(2) would silently replace), then writes the metadata (temp + rename). A crash between the two
 * leaves a file without metadata: it is served as application/octet-stream.
 */
import { randomUUID } from "node:crypto";
import { constants } from "node:fs";
import {
  copyFile,
  link,
  mkdir,
  open,
  readdir,
  readFile,
  rename,
  rm,
  stat,
  unlink,
  writeFile,
  rmdir,
} from "node:fs/promises";
import path from "node:path";
import type { Readable } from "node:stream";
import { assertValidKey } from "./keys.ts";
import { StorageKeyExistsError, StoredFileNotFoundError } from "./storageErrors.ts";
import { checkLifetime, sanitizeDownloadName, signLocalUrl, verifyLocalUrl, type UrlCheck } from "./signedUrl.ts";
import type { DocumentStore } from "./index.ts";

interface Metadata {
  contentType: string;
  size: number;
  storedAt: string;
}

export interface LocalFile {
  stream: Readable;
  size: number;
  contentType: string;
}

export class LocalDocumentStore implements DocumentStore {
  readonly backend = "local" as const;
  readonly root: string;
  readonly #secret: Buffer;
  readonly #publicBaseUrl: string;

  constructor(options: { root: string; secret: Buffer; publicBaseUrl: string }) {
    this.root = path.resolve(options.root);
    this.#secret = options.secret;
    this.#publicBaseUrl = options.publicBaseUrl;
  }

  /** Creates the directories and removes temp files older than a day (left by a crash during `put`). */
  async init(): Promise<void> {
    const tmp = path.join(this.root, ".tmp");
    await mkdir(tmp, { recursive: true, mode: 0o700 });
    await mkdir(path.join(this.root, ".meta"), { recursive: true, mode: 0o700 });
    const dayAgo = Date.now() - 24 * 3600 * 1000;
    for (const name of await readdir(tmp)) {
      const file = path.join(tmp, name);
      const info = await stat(file).catch(() => undefined);
      if (info && info.mtimeMs < dayAgo) await rm(file, { force: true });
    }
  }

  #dataPath(key: string): string {
    assertValidKey(key);
    return path.join(this.root, ...key.split("/"));
  }

  #metaPath(key: string): string {
    assertValidKey(key);
    return path.join(this.root, ".meta", ...key.split("/")) + ".json";
  }

  async put(key: string, sourceFile: string, contentType: string): Promise<void> {
    const target = this.#dataPath(key);
    if (await this.exists(key)) throw new StorageKeyExistsError(key);
    const temp = path.join(this.root, ".tmp", `${randomUUID()}.part`);
    try {
      await copyFile(sourceFile, temp, constants.COPYFILE_EXCL);
      const handle = await open(temp, "r+");
      let size: number;
      try {
        await handle.chmod(0o600);
        await handle.sync();
        size = (await handle.stat()).size;
      } finally {
        await handle.close();
      }
      await mkdir(path.dirname(target), { recursive: true, mode: 0o700 });
      try {
        await link(temp, target); // fails with EEXIST instead of replacing
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "EEXIST") throw new StorageKeyExistsError(key);
        throw error;
      }
      const meta: Metadata = { contentType, size, storedAt: new Date().toISOString() };
      const metaPath = this.#metaPath(key);
      const metaTemp = path.join(this.root, ".tmp", `${randomUUID()}.meta`);
      await mkdir(path.dirname(metaPath), { recursive: true, mode: 0o700 });
      await writeFile(metaTemp, JSON.stringify(meta), { mode: 0o600 });
      await rename(metaTemp, metaPath);
    } finally {
      await unlink(temp).catch(() => {});
    }
  }

  /** The file's bytes, size and stored content type; StoredFileNotFoundError (404 NOT_FOUND) when no file has this key. */
  async open(key: string): Promise<LocalFile> {
    const file = this.#dataPath(key);
    let handle;
    try {
      handle = await open(file, "r");
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOENT" || code === "ENOTDIR" || code === "EISDIR") throw new StoredFileNotFoundError();
      throw error;
    }
    try {
      const info = await handle.stat();
      if (!info.isFile()) throw new StoredFileNotFoundError();
      const meta = await this.#readMeta(key);
      const stream = handle.createReadStream({ autoClose: true });
      return { stream, size: info.size, contentType: meta?.contentType ?? "application/octet-stream" };
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  async #readMeta(key: string): Promise<Metadata | undefined> {
    try {
      return JSON.parse(await readFile(this.#metaPath(key), "utf8")) as Metadata;
    } catch {
      return undefined;
    }
  }

  async read(key: string): Promise<Readable> {
    return (await this.open(key)).stream;
  }

  async exists(key: string): Promise<boolean> {
    try {
      return (await stat(this.#dataPath(key))).isFile();
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOENT" || code === "ENOTDIR") return false;
      throw error;
    }
  }

  /** Removes the file and its metadata; deleting a missing key is not an error. */
  async delete(key: string): Promise<void> {
    await rm(this.#dataPath(key), { force: true });
    await rm(this.#metaPath(key), { force: true });
    // Leave no empty directories behind (e.g. after a file whose anchoring failed is removed).
    await this.#removeEmptyParents(path.dirname(this.#dataPath(key)));
    await this.#removeEmptyParents(path.dirname(this.#metaPath(key)));
  }

  async #removeEmptyParents(dir: string): Promise<void> {
    for (let current = dir; current.startsWith(this.root + path.sep); current = path.dirname(current)) {
      try {
        await rmdir(current); // fails unless empty
      } catch {
        return;
      }
    }
  }

  async signedUrl(
    key: string,
    expiresInSeconds: number,
    downloadName?: string,
  ): Promise<{ url: string; expiresAt: Date }> {
    assertValidKey(key);
    checkLifetime(expiresInSeconds);
    const expires = Math.floor(Date.now() / 1000) + expiresInSeconds;
    const url = signLocalUrl({
      secret: this.#secret,
      publicBaseUrl: this.#publicBaseUrl,
      key,
      expires,
      downloadName: sanitizeDownloadName(downloadName),
    });
    return { url, expiresAt: new Date(expires * 1000) };
  }

  verifyUrl(token: string, query: { expires?: string; signature?: string; name?: string }): UrlCheck {
    return verifyLocalUrl(this.#secret, token, query);
  }
}
