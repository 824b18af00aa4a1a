/**
 * Document storage against real backends: the local store in a temp directory (downloads served by an in-process
 * Koa app mounting `fileRoutes`, and by the running stack's API) and the S3 store against s3rver. The same
 * behaviour suite runs on both. Then file signatures on real minimal PDF, PNG and JPEG files, and the streaming
 * multipart parser through an in-process Koa app.
 */
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import http from "node:http";
import { connect as netConnect } from "node:net";
import type net from "node:net";
import os from "node:os";
import path from "node:path";
import type { Readable } from "node:stream";
import { crc32, deflateSync } from "node:zlib";
import Router from "@koa/router";
import { expect } from "chai";
import Koa from "koa";
import { loadConfig, type Config } from "../../api/src/config.ts";
import { errorMiddleware, toAppError } from "../../api/src/http/errorMiddleware.ts";
import { mountRoutes } from "../../api/src/http/routeTable.ts";
import {
  checkUpload,
  createDocumentStore,
  documentVersionKey,
  parseUpload,
  StorageKeyExistsError,
  StoredFileNotFoundError,
  type DocumentStore,
} from "../../api/src/storage/index.ts";
import { fileRoutes } from "../../api/src/routes/files.ts";
import { encodeKeyToken, signLocalUrl } from "../../api/src/storage/signedUrl.ts";
import { current } from "./support/stackFixture.ts";
import { startS3Server, type S3ServerHandle } from "./support/s3Server.ts";

// ---------------------------------------------------------------------------------------------------------------
// Real minimal files

/** A one-page PDF with a correct cross-reference table. */
function minimalPdf(): Buffer {
  const content = "BT /F1 24 Tf 20 100 Td (Licence) Tj ET";
  const objects = [
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
    `<< /Length ${content.length} >>\nstream\n${content}\nendstream`,
    "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
  ];
  let body = "%PDF-1.4\n";
  const offsets: number[] = [];
  objects.forEach((object, i) => {
    offsets.push(Buffer.byteLength(body));
    body += `${i + 1} 0 obj\n${object}\nendobj\n`;
  });
  const xref = Buffer.byteLength(body);
  body += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const offset of offsets) body += `${String(offset).padStart(10, "0")} 00000 n \n`;
  body += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(body, "latin1");
}

function pngChunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const typeAndData = Buffer.concat([Buffer.from(type, "ascii"), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(typeAndData));
  return Buffer.concat([length, typeAndData, crc]);
}

/** A 2×2 RGB PNG: IHDR, zlib-compressed IDAT (filter byte 0 per row), IEND, each with its CRC. */
function minimalPng(): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(2, 0); // width
  header.writeUInt32BE(2, 4); // height
  header.set([8, 2, 0, 0, 0], 8); // 8-bit, truecolour, deflate, adaptive filtering, no interlace
  const rows = Buffer.from([0, 255, 0, 0, 0, 255, 0, 0, 0, 0, 255, 255, 255, 255]);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk("IHDR", header),
    pngChunk("IDAT", deflateSync(rows)),
    pngChunk("IEND", Buffer.alloc(0)),
  ]);
}

/**
 * A baseline (SOF0) 1×1 greyscale JPEG: JFIF header, a quantisation table of ones, one-code Huffman tables (DC
 * category 0, AC end-of-block), and one 8×8 block whose bits are "0" (DC diff 0) "0" (EOB) padded with ones.
 */
function minimalJpeg(): Buffer {
  const segment = (marker: number, payload: number[]) => [
    0xff,
    marker,
    (payload.length + 2) >> 8,
    (payload.length + 2) & 0xff,
    ...payload,
  ];
  const oneCodeTable = (tableClassAndId: number) => [tableClassAndId, 1, ...new Array(15).fill(0), 0x00];
  return Buffer.from([
    0xff,
    0xd8, // SOI
    ...segment(0xe0, [0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00]), // APP0 JFIF
    ...segment(0xdb, [0x00, ...new Array(64).fill(1)]), // DQT 0
    ...segment(0xc0, [0x08, 0x00, 0x01, 0x00, 0x01, 0x01, 0x01, 0x11, 0x00]), // SOF0 1×1, 1 component
    ...segment(0xc4, oneCodeTable(0x00)), // DHT DC 0
    ...segment(0xc4, oneCodeTable(0x10)), // DHT AC 0
    ...segment(0xda, [0x01, 0x01, 0x00, 0x00, 0x3f, 0x00]), // SOS
    0x3f, // entropy-coded data
    0xff,
    0xd9, // EOI
  ]);
}

const PDF = minimalPdf();
const PNG = minimalPng();
const JPEG = minimalJpeg();

// ---------------------------------------------------------------------------------------------------------------
// Helpers

async function collect(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

async function listen(server: http.Server): Promise<string> {
  server.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  return `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
}

async function close(server: http.Server): Promise<void> {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
}

/** An app like the API's for these routes: error middleware, then /api/v1 routes. */
function fileApp(store: DocumentStore, config: Config): Koa {
  const app = new Koa();
  app.silent = true;
  app.use(errorMiddleware());
  const router = new Router({ prefix: "/api/v1" });
  mountRoutes(router, fileRoutes(store, config), async () => undefined);
  app.use(router.routes());
  return app;
}

const newKey = (extension = "pdf") => documentVersionKey(randomUUID(), randomUUID(), 1, extension);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// ---------------------------------------------------------------------------------------------------------------

describe("Document storage", function () {
  let work: string;
  let pdfFile: string;
  let pngFile: string;

  before(async () => {
    work = await mkdtemp(path.join(os.tmpdir(), "storage-test-"));
    pdfFile = path.join(work, "sample.pdf");
    pngFile = path.join(work, "sample.png");
    await writeFile(pdfFile, PDF);
    await writeFile(pngFile, PNG);
  });
  after(async () => {
    await rm(work, { recursive: true, force: true });
  });

  interface Backend {
    store: DocumentStore;
    config: Config;
    /** Base URL of an in-process app mounting fileRoutes for this store. */
    appUrl: string;
    stop(): Promise<void>;
  }

  const backends: Record<"local" | "s3", () => Promise<Backend>> = {
    async local() {
      const dataDir = await mkdtemp(path.join(work, "local-"));
      const server = http.createServer();
      const appUrl = await listen(server);
      const config = loadConfig({
        NODE_ENV: "test",
        DATA_DIR: dataDir,
        STORAGE_BACKEND: "local",
        FILE_URL_SECRET: randomBytes(32).toString("hex"),
        PUBLIC_BASE_URL: appUrl,
      });
      const store = await createDocumentStore(config);
      server.on("request", fileApp(store, config).callback());
      return { store, config, appUrl, stop: () => close(server) };
    },
    async s3() {
      const s3: S3ServerHandle = await startS3Server();
      const config = loadConfig({
        NODE_ENV: "test",
        DATA_DIR: await mkdtemp(path.join(work, "s3-")),
        STORAGE_BACKEND: "s3",
        S3_ENDPOINT: s3.endpoint,
        S3_REGION: s3.region,
        S3_BUCKET: "licence-documents-test",
        S3_ACCESS_KEY_ID: s3.accessKeyId,
        S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
        S3_FORCE_PATH_STYLE: "true",
      });
      const store = await createDocumentStore(config); // creates the missing bucket
      const server = http.createServer();
      const appUrl = await listen(server);
      server.on("request", fileApp(store, config).callback());
      return {
        store,
        config,
        appUrl,
        stop: async () => {
          await close(server);
          (store as { close?: () => void }).close?.();
          await s3.stop();
        },
      };
    },
  };

  for (const name of ["local", "s3"] as const) {
    describe(`the ${name} backend`, function () {
      let backend: Backend;
      let store: DocumentStore;
      before(async () => {
        backend = await backends[name]();
        store = backend.store;
      });
      after(async () => {
        await backend?.stop();
      });

      it("stores a file, reports it exists and reads the same bytes back", async function () {
        const key = newKey();
        expect(store.backend).to.equal(name);
        expect(await store.exists(key)).to.equal(false);
        await store.put(key, pdfFile, "application/pdf");
        expect(await store.exists(key)).to.equal(true);
        expect((await collect(await store.read(key))).equals(PDF)).to.equal(true);
      });

      it("refuses to overwrite a stored key (versions are immutable)", async function () {
        const key = newKey();
        await store.put(key, pdfFile, "application/pdf");
        const error = await store.put(key, pngFile, "image/png").then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error).to.be.instanceOf(StorageKeyExistsError);
        expect(toAppError(error)).to.include({ status: 409, code: "FILE_EXISTS" });
        expect((await collect(await store.read(key))).equals(PDF)).to.equal(true);
      });

      it("deletes a file; deleting it again is not an error; reading it is 404", async function () {
        const key = newKey();
        await store.put(key, pdfFile, "application/pdf");
        await store.delete(key);
        expect(await store.exists(key)).to.equal(false);
        await store.delete(key);
        const error = await store.read(key).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error).to.be.instanceOf(StoredFileNotFoundError);
        expect(toAppError(error)).to.include({ status: 404, code: "NOT_FOUND" });
        // The key is free again only through delete: a new put under it works.
        await store.put(key, pngFile, "image/png");
        expect((await collect(await store.read(key))).equals(PNG)).to.equal(true);
      });

      it("refuses keys that could escape the store", async function () {
        for (const key of [
          "../secrets/master.key",
          "/etc/passwd",
          "a//b",
          "a/./b",
          "a/../b",
          ".meta/x",
          "a\\b",
          "",
          "a/\nb",
        ]) {
          const error = await store.put(key, pdfFile, "application/pdf").then(
            () => undefined,
            (e: Error) => e,
          );
          expect(error?.name, JSON.stringify(key)).to.equal("InvalidStorageKeyError");
          const signing = await store.signedUrl(key, 60).then(
            () => undefined,
            (e: Error) => e,
          );
          expect(signing?.name, JSON.stringify(key)).to.equal("InvalidStorageKeyError");
        }
      });

      it("gives a signed URL that downloads the file with its content type and download name", async function () {
        const key = newKey("png");
        await store.put(key, pngFile, "image/png");
        const before = Date.now();
        const { url, expiresAt } = await store.signedUrl(key, 120, "Site plan (v1) é.png");
        expect(expiresAt.getTime()).to.be.within(before + 118_000, Date.now() + 120_000);
        const response = await fetch(url);
        expect(response.status).to.equal(200);
        expect(response.headers.get("content-type")).to.equal("image/png");
        expect(response.headers.get("content-disposition")).to.equal(
          `attachment; filename="Site plan (v1) _.png"; filename*=UTF-8''Site%20plan%20%28v1%29%20%C3%A9.png`,
        );
        expect(Buffer.from(await response.arrayBuffer()).equals(PNG)).to.equal(true);

        const plain = await store.signedUrl(key, 60);
        const second = await fetch(plain.url);
        expect(second.status).to.equal(200);
        expect(second.headers.get("content-type")).to.equal("image/png");
        expect(Buffer.from(await second.arrayBuffer()).equals(PNG)).to.equal(true);
      });

      it("refuses a signed URL once it has expired", async function () {
        const key = newKey();
        await store.put(key, pdfFile, "application/pdf");
        const { url } = await store.signedUrl(key, 1);
        await sleep(2100);
        const response = await fetch(url);
        expect(response.status).to.equal(403);
        if (name === "local") {
          expect(await response.json()).to.deep.equal({ code: "FORBIDDEN", message: "This download link has expired" });
        } else {
          expect(await response.text()).to.include("AccessDenied");
        }
      });

      if (name === "local") {
        it("refuses tampered signed URLs with 403 FORBIDDEN", async function () {
          const key = newKey();
          const otherKey = newKey();
          await store.put(key, pdfFile, "application/pdf");
          await store.put(otherKey, pdfFile, "application/pdf");
          const { url } = await store.signedUrl(key, 300, "a.pdf");
          const original = new URL(url);
          expect(original.pathname).to.equal(`/api/v1/files/${encodeKeyToken(key)}`);
          expect([...original.searchParams.keys()]).to.deep.equal(["expires", "name", "signature"]);
          expect(original.searchParams.get("signature")).to.match(/^[0-9a-f]{64}$/);

          const tamper = (change: (u: URL) => void) => {
            const u = new URL(url);
            change(u);
            return u.toString();
          };
          const signature = original.searchParams.get("signature")!;
          const attempts = [
            tamper((u) => u.searchParams.set("signature", (signature[0] === "a" ? "b" : "a") + signature.slice(1))),
            tamper((u) => u.searchParams.set("expires", String(Number(u.searchParams.get("expires")) + 3600))),
            tamper((u) => u.searchParams.set("name", "b.pdf")),
            tamper((u) => u.searchParams.delete("name")),
            tamper((u) => u.searchParams.delete("signature")),
            tamper((u) => u.searchParams.append("signature", signature)),
            tamper((u) => u.searchParams.set("signature", "zz")),
            tamper((u) => (u.pathname = `/api/v1/files/${encodeKeyToken(otherKey)}`)),
            tamper((u) => (u.pathname = `/api/v1/files/${encodeKeyToken(key)}=`)),
          ];
          for (const attempt of attempts) {
            const response = await fetch(attempt);
            expect(response.status, attempt).to.equal(403);
            expect(await response.json(), attempt).to.deep.equal({
              code: "FORBIDDEN",
              message: "This download link is invalid",
            });
          }
          expect((await fetch(url)).status).to.equal(200);
        });

        it("refuses a correctly signed token naming a path outside the store", async function () {
          const secret = Buffer.from(backend.config.fileUrlSecret!.slice(2), "hex");
          const expires = Math.floor(Date.now() / 1000) + 60;
          for (const key of ["../secrets/file-url.key", "../../etc/passwd", ".meta/x.json"]) {
            const url = signLocalUrl({ secret, publicBaseUrl: backend.appUrl, key, expires });
            const response = await fetch(url);
            expect(response.status, key).to.equal(403);
            expect(await response.json()).to.deep.equal({
              code: "FORBIDDEN",
              message: "This download link is invalid",
            });
          }
          const raw = await fetch(
            `${backend.appUrl}/api/v1/files/..%2F..%2Fsecrets%2Ffile-url.key?expires=${expires}&signature=${"0".repeat(64)}`,
          );
          expect(raw.status).to.equal(403);
        });

        it("answers 404 NOT_FOUND for a valid link to a deleted file, and sends safe headers", async function () {
          const key = newKey();
          await store.put(key, pdfFile, "application/pdf");
          const { url } = await store.signedUrl(key, 60);
          const ok = await fetch(url);
          expect(ok.headers.get("x-content-type-options")).to.equal("nosniff");
          expect(ok.headers.get("content-disposition")).to.equal("attachment");
          expect(ok.headers.get("content-length")).to.equal(String(PDF.length));
          await ok.arrayBuffer();
          const head = await fetch(url, { method: "HEAD" });
          expect(head.status).to.equal(200);
          expect(head.headers.get("content-length")).to.equal(String(PDF.length));
          expect(head.headers.get("content-type")).to.equal("application/pdf");
          await store.delete(key);
          const gone = await fetch(url);
          expect(gone.status).to.equal(404);
          expect(await gone.json()).to.deep.equal({ code: "NOT_FOUND", message: "File not found" });
        });

        it("stores files under DATA_DIR/files with no temp files left behind", async function () {
          const root = path.join(backend.config.dataDir, "files");
          const key = newKey();
          await store.put(key, pdfFile, "application/pdf");
          expect((await readFile(path.join(root, ...key.split("/")))).equals(PDF)).to.equal(true);
          expect(await readdir(path.join(root, ".tmp"))).to.deep.equal([]);
        });
      } else {
        it("does not serve /api/v1/files (S3 serves its own presigned URLs)", async function () {
          const response = await fetch(
            `${backend.appUrl}/api/v1/files/${encodeKeyToken(newKey())}?expires=1&signature=${"0".repeat(64)}`,
          );
          expect(response.status).to.equal(404);
          expect(await response.json()).to.deep.equal({ code: "NOT_FOUND", message: "File not found" });
        });

        it("points presigned URLs at the configured endpoint and bucket (path style)", async function () {
          const key = newKey();
          await store.put(key, pdfFile, "application/pdf");
          const { url } = await store.signedUrl(key, 60, "x.pdf");
          const parsed = new URL(url);
          expect(`${parsed.protocol}//${parsed.host}`).to.equal(backend.config.s3Endpoint);
          expect(parsed.pathname).to.equal(`/licence-documents-test/${key}`);
          expect(parsed.searchParams.get("X-Amz-Expires")).to.equal("60");
        });
      }
    });
  }

  describe("signed URLs through the running stack's API", function () {
    it("serves a file stored by a store configured like the stack's", async function () {
      const config = loadConfig(current().env);
      if (config.storageBackend !== "local") this.skip();
      const store = await createDocumentStore(config);
      const key = newKey();
      await store.put(key, pdfFile, "application/pdf");
      try {
        const { url } = await store.signedUrl(key, 60, "Licence.pdf");
        const signed = new URL(url);
        const response = await fetch(`${current().api.url}${signed.pathname}${signed.search}`);
        expect(response.status).to.equal(200);
        expect(response.headers.get("content-type")).to.equal("application/pdf");
        expect(response.headers.get("content-disposition")).to.equal(
          `attachment; filename="Licence.pdf"; filename*=UTF-8''Licence.pdf`,
        );
        expect(Buffer.from(await response.arrayBuffer()).equals(PDF)).to.equal(true);

        signed.searchParams.set("name", "Other.pdf");
        const tampered = await fetch(`${current().api.url}${signed.pathname}${signed.search}`);
        expect(tampered.status).to.equal(403);
        expect(await tampered.json()).to.deep.equal({ code: "FORBIDDEN", message: "This download link is invalid" });
      } finally {
        await store.delete(key);
      }
    });
  });

  describe("file signatures (checkUpload)", function () {
    async function file(name: string, bytes: Buffer) {
      const filePath = path.join(work, `sig-${randomUUID()}`);
      await writeFile(filePath, bytes);
      return { path: filePath, size: bytes.length, originalFilename: name };
    }
    const outcome = (promise: Promise<unknown>) =>
      promise.then(
        (value) => value,
        (error: unknown) => {
          const answer = toAppError(error);
          return { status: answer.status, code: answer.code, reason: answer.details?.reason, message: answer.message };
        },
      );

    it("recognises real PDF, PNG and JPEG files by their bytes", async function () {
      expect(
        await checkUpload({ ...(await file("application.pdf", PDF)), declaredType: "application/pdf" }),
      ).to.deep.equal({ mimeType: "application/pdf", extension: "pdf" });
      expect(await checkUpload({ ...(await file("plan.PNG", PNG)), declaredType: "image/png" })).to.deep.equal({
        mimeType: "image/png",
        extension: "png",
      });
      expect(
        await checkUpload({ ...(await file("photo.jpeg", JPEG)), declaredType: "image/jpeg; charset=binary" }),
      ).to.deep.equal({ mimeType: "image/jpeg", extension: "jpg" });
      // Names and types that claim no accepted type are not judged: the bytes decide.
      expect(
        await checkUpload({ ...(await file("scan", JPEG)), declaredType: "application/octet-stream" }),
      ).to.deep.equal({ mimeType: "image/jpeg", extension: "jpg" });
      expect(await checkUpload({ ...(await file("scan.bin", PDF)), declaredType: null })).to.deep.equal({
        mimeType: "application/pdf",
        extension: "pdf",
      });
    });

    it("refuses an empty file", async function () {
      expect(
        await outcome(checkUpload({ ...(await file("empty.pdf", Buffer.alloc(0))), declaredType: "application/pdf" })),
      ).to.deep.equal({
        status: 400,
        code: "INVALID_FILE",
        reason: "EMPTY",
        message: "The file is empty",
      });
    });

    it("refuses content that is not PDF, PNG or JPEG whatever its name says", async function () {
      const text = await outcome(
        checkUpload({
          ...(await file("contract.pdf", Buffer.from("just some text, not a PDF\n"))),
          declaredType: "application/pdf",
        }),
      );
      expect(text).to.include({ status: 400, code: "INVALID_FILE", reason: "UNSUPPORTED_TYPE" });
      const exe = Buffer.concat([Buffer.from("MZ\x90\x00\x03\x00\x00\x00", "latin1"), randomBytes(120)]);
      expect(await outcome(checkUpload({ ...(await file("photo.png", exe)), declaredType: "image/png" }))).to.include({
        status: 400,
        code: "INVALID_FILE",
        reason: "UNSUPPORTED_TYPE",
      });
      // A truncated signature is not the type.
      expect(
        await outcome(checkUpload({ ...(await file("a.png", PNG.subarray(0, 6))), declaredType: "image/png" })),
      ).to.include({ reason: "UNSUPPORTED_TYPE" });
    });

    it("refuses a disguised file: bytes of one accepted type named or sent as another", async function () {
      const byName = await outcome(
        checkUpload({ ...(await file("x.pdf", PNG)), declaredType: "application/octet-stream" }),
      );
      expect(byName).to.deep.equal({
        status: 400,
        code: "INVALID_FILE",
        reason: "DISGUISED",
        message: `The file's content is PNG but its name "x.pdf" says PDF`,
      });
      const byType = await outcome(checkUpload({ ...(await file("x", JPEG)), declaredType: "image/png" }));
      expect(byType).to.include({ code: "INVALID_FILE", reason: "DISGUISED" });
      expect(await outcome(checkUpload({ ...(await file("x.png", PNG)), declaredType: "application/pdf" }))).to.include(
        { reason: "DISGUISED" },
      );
    });
  });

  describe("multipart uploads (parseUpload) through an in-process app", function () {
    const maxBytes = 10 * 1024 * 1024;
    let tmpDir: string;
    let server: http.Server;
    let base: string;

    before(async () => {
      tmpDir = path.join(work, "uploads");
      const app = new Koa();
      app.silent = true;
      app.use(errorMiddleware());
      // On /upload-slow a refusal is answered half a second late, as on a loaded server (the body goes on arriving).
      app.use(async (ctx, next) => {
        try {
          await next();
        } catch (error) {
          if (ctx.path === "/upload-slow") await new Promise((resolve) => setTimeout(resolve, 500));
          throw error;
        }
      });
      const router = new Router();
      router.post(["/upload", "/upload-slow"], async (ctx) => {
        const upload = await parseUpload(ctx.req, { response: ctx.res, maxBytes, tmpDir, fileField: "file" });
        try {
          const hashed = createHash("sha256")
            .update(await readFile(upload.file.path))
            .digest("hex");
          const checked = await checkUpload(upload.file);
          ctx.body = { ...upload.file, path: undefined, fields: upload.fields, checked, rehashed: hashed };
        } finally {
          await upload.cleanup();
        }
      });
      app.use(router.routes());
      server = http.createServer(app.callback());
      base = await listen(server);
    });
    after(async () => {
      await close(server);
    });
    afterEach(async function () {
      expect(await readdir(tmpDir).catch(() => []), "temp files left").to.deep.equal([]);
    });

    function form(
      files: { field?: string; name: string; bytes: Buffer; type?: string }[],
      fields: Record<string, string> = {},
    ) {
      const body = new FormData();
      for (const [name, value] of Object.entries(fields)) body.append(name, value);
      for (const f of files)
        body.append(f.field ?? "file", new Blob([new Uint8Array(f.bytes)], { type: f.type ?? "" }), f.name);
      return body;
    }

    it("streams a file to a temp file with its size and SHA-256, and keeps the text fields", async function () {
      const response = await fetch(`${base}/upload`, {
        method: "POST",
        body: form([{ name: "Application form.pdf", bytes: PDF, type: "application/pdf" }], {
          documentType: "APPLICATION_FORM",
        }),
      });
      expect(response.status).to.equal(200);
      const body = (await response.json()) as Record<string, unknown>;
      expect(body).to.deep.equal({
        size: PDF.length,
        sha256: createHash("sha256").update(PDF).digest("hex"),
        originalFilename: "Application form.pdf",
        declaredType: "application/pdf",
        fields: { documentType: "APPLICATION_FORM" },
        checked: { mimeType: "application/pdf", extension: "pdf" },
        rehashed: createHash("sha256").update(PDF).digest("hex"),
      });
    });

    it("hashes a large file correctly while streaming", async function () {
      const bytes = Buffer.concat([PNG, randomBytes(3 * 1024 * 1024)]);
      const response = await fetch(`${base}/upload`, {
        method: "POST",
        body: form([{ name: "big.png", bytes, type: "image/png" }]),
      });
      const body = (await response.json()) as { size: number; sha256: string };
      expect(response.status).to.equal(200);
      expect(body.size).to.equal(bytes.length);
      expect(body.sha256).to.equal(createHash("sha256").update(bytes).digest("hex"));
    });

    it("refuses an 11 MB upload with 413 PAYLOAD_TOO_LARGE before reading it (Content-Length)", async function () {
      const bytes = Buffer.concat([PDF, Buffer.alloc(11 * 1024 * 1024 - PDF.length, 0x20)]);
      const response = await fetch(`${base}/upload`, {
        method: "POST",
        body: form([{ name: "huge.pdf", bytes, type: "application/pdf" }]),
      });
      expect(response.status).to.equal(413);
      expect(await response.json()).to.deep.equal({
        code: "PAYLOAD_TOO_LARGE",
        message: "The file is larger than the allowed 10 MB (10485760 bytes)",
        details: { maxBytes },
      });
    });

    it("lets a client that keeps sending after the refusal read the answer, and cuts off a body that goes on", async function () {
      // A socket closed while the client still sends resets the connection (the client sees EPIPE, not the answer);
      // the parser reads and discards up to 16 MiB more instead, then pauses, and closes 2 s after the answer has
      // gone out. The answer comes half a second after the refusal: 16 MiB arrive sooner than that on loopback, so
      // a cut-off that did not wait for the answer would lose it.
      const boundary = "----linger-boundary";
      const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="x.pdf"\r\nX-Pad: `;
      const chunk = Buffer.alloc(64 * 1024, 0x61); // the header value goes on: refused after 16 KiB
      const { answer, written, error } = await new Promise<{ answer: string; written: number; error?: string }>(
        (resolve) => {
          const url = new URL(base);
          const socket = netConnect({ host: url.hostname, port: Number(url.port) });
          let answer = "";
          let written = 0;
          let error: string | undefined;
          let stopped = false;
          socket.setEncoding("latin1");
          socket.on("data", (text: string) => (answer += text));
          socket.on("error", (e: NodeJS.ErrnoException) => {
            error = e.code;
            stopped = true;
          });
          socket.on("close", () => resolve({ answer, written, error }));
          const frame = (bytes: Buffer) =>
            Buffer.concat([Buffer.from(`${bytes.length.toString(16)}\r\n`), bytes, Buffer.from("\r\n")]);
          const pump = () => {
            while (!stopped && written < 64 * 1024 * 1024) {
              written += chunk.length;
              if (!socket.write(frame(chunk))) return void socket.once("drain", pump);
            }
            if (!stopped) socket.end();
          };
          socket.write(
            `POST /upload-slow HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\n` +
              `Transfer-Encoding: chunked\r\n\r\n`,
          );
          socket.write(frame(Buffer.from(head)));
          pump();
        },
      );
      expect(answer, `the answer (socket error: ${error})`).to.match(/^HTTP\/1\.1 400 /);
      expect(answer).to.include("PART_HEADERS_TOO_LARGE");
      expect(answer).to.not.match(/connection: close/i);
      // Cut off: far less than the 64 MiB the client meant to send was taken.
      expect(written).to.be.below(32 * 1024 * 1024);
    });

    it("drains a refused 11 MB upload, so the client's next request on the same connection is answered", async function () {
      // A keep-alive client that got the 413 while still sending reuses the connection once its body is out: the
      // whole body must be read (not cut off halfway, which would leave it unread and reset the next request).
      const boundary = "----drain-boundary";
      const multipart = (name: string, bytes: Buffer) =>
        Buffer.concat([
          Buffer.from(
            `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\n` +
              `Content-Type: application/pdf\r\n\r\n`,
          ),
          bytes,
          Buffer.from(`\r\n--${boundary}--\r\n`),
        ]);
      const request = (body: Buffer) =>
        Buffer.concat([
          Buffer.from(
            `POST /upload HTTP/1.1\r\nHost: localhost\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\n` +
              `Content-Length: ${body.length}\r\n\r\n`,
          ),
          body,
        ]);
      const url = new URL(base);
      const socket = netConnect({ host: url.hostname, port: Number(url.port) });
      let received = "";
      socket.setEncoding("latin1");
      socket.on("data", (text: string) => (received += text));
      const closed = new Promise<string>((resolve) => {
        socket.on("error", (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
        socket.on("close", () => resolve("closed"));
      });
      const until = async (done: () => boolean, what: string) => {
        const deadline = Date.now() + 10_000;
        while (!done()) {
          if (Date.now() > deadline) throw new Error(`${what} within 10 s; received: ${received.slice(0, 300)}`);
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      };
      try {
        const big = Buffer.concat([PDF, Buffer.alloc(11 * 1024 * 1024, 0x20)]);
        let written = false;
        socket.write(request(multipart("big.pdf", big)), () => (written = true));
        await until(() => received.includes("PAYLOAD_TOO_LARGE") && written, "the 413, and the whole body written");
        expect(received).to.match(/^HTTP\/1\.1 413 /);
        received = "";
        socket.write(request(multipart("small.pdf", PDF)));
        await until(() => /\r\n\r\n\{.*\}$/s.test(received), "the second request's answer");
        expect(received).to.match(/^HTTP\/1\.1 200 /);
        expect(received).to.include(`"size":${PDF.length}`);
      } finally {
        socket.destroy();
        await closed;
      }
    });

    it("answers 400 VALIDATION_ERROR for a missing file, two files, a file in another field, malformed multipart", async function () {
      const missing = await fetch(`${base}/upload`, { method: "POST", body: form([], { documentType: "X" }) });
      expect(missing.status).to.equal(400);
      expect(await missing.json()).to.deep.equal({
        code: "VALIDATION_ERROR",
        message: `A file is required in the multipart field "file"`,
        details: {
          issues: [{ in: "body", path: "file", message: `A file is required in the multipart field "file"` }],
        },
      });

      const two = await fetch(`${base}/upload`, {
        method: "POST",
        body: form([
          { name: "a.pdf", bytes: PDF },
          { name: "b.pdf", bytes: PDF },
        ]),
      });
      expect(two.status).to.equal(400);
      expect(await two.json()).to.include({ code: "VALIDATION_ERROR", message: "Send exactly one file" });

      const elsewhere = await fetch(`${base}/upload`, {
        method: "POST",
        body: form([{ field: "attachment", name: "a.pdf", bytes: PDF }]),
      });
      expect(elsewhere.status).to.equal(400);
      expect(await elsewhere.json()).to.include({ code: "VALIDATION_ERROR" });

      const truncated = await fetch(`${base}/upload`, {
        method: "POST",
        headers: { "content-type": "multipart/form-data; boundary=xyz" },
        body: `--xyz\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\nContent-Type: application/pdf\r\n\r\n%PDF-1.4 truncated`,
      });
      expect(truncated.status).to.equal(400);
      expect(await truncated.json()).to.deep.equal({
        code: "VALIDATION_ERROR",
        message: "The request body is not valid multipart/form-data",
        details: { reason: "MALFORMED_MULTIPART" },
      });

      const noBoundary = await fetch(`${base}/upload`, {
        method: "POST",
        headers: { "content-type": "multipart/form-data" },
        body: "x",
      });
      expect(noBoundary.status).to.equal(400);
      expect(await noBoundary.json()).to.include({ code: "VALIDATION_ERROR" });
    });

    it("answers 415 UNSUPPORTED_MEDIA_TYPE for a body that is not multipart", async function () {
      const response = await fetch(`${base}/upload`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}",
      });
      expect(response.status).to.equal(415);
      expect(await response.json()).to.deep.equal({
        code: "UNSUPPORTED_MEDIA_TYPE",
        message: "Send the document as multipart/form-data",
      });
    });

    it("passes the file's name and Content-Type to checkUpload: a disguised or empty upload is 400 INVALID_FILE", async function () {
      const disguised = await fetch(`${base}/upload`, {
        method: "POST",
        body: form([{ name: "x.pdf", bytes: PNG, type: "application/pdf" }]),
      });
      expect(disguised.status).to.equal(400);
      expect(await disguised.json()).to.deep.include({ code: "INVALID_FILE" });
      const empty = await fetch(`${base}/upload`, {
        method: "POST",
        body: form([{ name: "empty.pdf", bytes: Buffer.alloc(0), type: "application/pdf" }]),
      });
      expect(empty.status).to.equal(400);
      expect(await empty.json()).to.include({ code: "INVALID_FILE", message: "The file is empty" });
    });

    it("treats a file part without Content-Type as the file (not a text field), declared text/plain as RFC 7578 says", async function () {
      const boundary = "b0undary";
      const body = Buffer.concat([
        Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="scan.jpg"\r\n\r\n`),
        JPEG,
        Buffer.from(`\r\n--${boundary}--\r\n`),
      ]);
      const response = await fetch(`${base}/upload`, {
        method: "POST",
        headers: { "content-type": `multipart/form-data; boundary=${boundary}` },
        body,
      });
      expect(response.status).to.equal(200);
      expect(await response.json()).to.deep.include({
        size: JPEG.length,
        declaredType: "text/plain",
        checked: { mimeType: "image/jpeg", extension: "jpg" },
      });
    });
  });
});
