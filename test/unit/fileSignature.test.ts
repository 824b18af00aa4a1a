import { expect } from "chai";
import { toAppError } from "../../api/src/http/errorMiddleware.ts";
import { InvalidFileError } from "../../api/src/storage/storageErrors.ts";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { AppError } from "../../api/src/domain/errors.ts";
import {
  checkUpload,
  detectBytes,
  typeClaimedByContentType,
  typeClaimedByName,
} from "../../api/src/storage/fileSignature.ts";

const PDF = Buffer.from("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n", "latin1");
const PNG_MAGIC = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
/** The signature and a 13-byte IHDR chunk (CRC not checked): what file-type needs to call it PNG. */
const PNG = Buffer.concat([PNG_MAGIC, Buffer.from([0, 0, 0, 13]), Buffer.from("IHDR"), Buffer.alloc(17)]);
const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 16, 0x4a, 0x46]);

describe("fileSignature (api/src/storage/fileSignature.ts)", function () {
  describe("detectBytes", function () {
    it("types PDF, PNG and JPEG by their content", async function () {
      expect(await detectBytes(PDF)).to.deep.equal({ mimeType: "application/pdf", extension: "pdf" });
      expect(await detectBytes(PNG)).to.deep.equal({ mimeType: "image/png", extension: "png" });
      expect(await detectBytes(JPEG)).to.deep.equal({ mimeType: "image/jpeg", extension: "jpg" });
    });

    it("types nothing else, nor a truncated signature", async function () {
      expect(await detectBytes(Buffer.from("GIF89a"))).to.equal(undefined);
      expect(await detectBytes(PNG.subarray(0, 7))).to.equal(undefined);
      expect(await detectBytes(Buffer.concat([PNG_MAGIC, Buffer.from("garbage")]))).to.equal(undefined); // no IHDR
      expect(await detectBytes(Buffer.from(" %PDF-1.7"))).to.equal(undefined); // only at offset 0
      expect(await detectBytes(new Uint8Array())).to.equal(undefined);
    });
  });

  describe("claims", function () {
    it("reads the last extension of a name, case-insensitively", function () {
      expect(typeClaimedByName("scan.PDF")).to.equal("application/pdf");
      expect(typeClaimedByName("photo.tar.jpeg")).to.equal("image/jpeg");
      expect(typeClaimedByName("photo.jfif")).to.equal("image/jpeg");
      expect(typeClaimedByName("scan.pdf.bin")).to.equal(undefined);
      expect(typeClaimedByName("noextension")).to.equal(undefined);
      expect(typeClaimedByName(null)).to.equal(undefined);
    });

    it("reads a Content-Type without its parameters, case-insensitively", function () {
      expect(typeClaimedByContentType("Application/PDF; charset=binary")).to.equal("application/pdf");
      expect(typeClaimedByContentType("image/x-png")).to.equal("image/png");
      expect(typeClaimedByContentType("image/pjpeg")).to.equal("image/jpeg");
      expect(typeClaimedByContentType("application/octet-stream")).to.equal(undefined);
      expect(typeClaimedByContentType(undefined)).to.equal(undefined);
    });
  });

  describe("checkUpload", function () {
    let dir: string;
    before(async function () {
      dir = await mkdtemp(path.join(tmpdir(), "file-signature-"));
    });
    after(async function () {
      await rm(dir, { recursive: true, force: true });
    });

    async function upload(bytes: Buffer, originalFilename?: string, declaredType?: string) {
      const file = path.join(dir, `f${Math.random().toString(16).slice(2)}`);
      await writeFile(file, bytes);
      return { path: file, size: bytes.length, originalFilename, declaredType };
    }

    async function refusal(promise: Promise<unknown>): Promise<AppError> {
      const error = await promise.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).to.be.instanceOf(InvalidFileError);
      // The error middleware's answer for it: 400 INVALID_FILE.
      const answer = toAppError(error);
      expect(answer.status).to.equal(400);
      expect(answer.code).to.equal("INVALID_FILE");
      return answer;
    }

    it("returns the type of the bytes when no claim contradicts it", async function () {
      expect(await checkUpload(await upload(PNG, "scan.png", "image/png"))).to.deep.equal({
        mimeType: "image/png",
        extension: "png",
      });
      // claims that name no accepted type are not judged
      expect(await checkUpload(await upload(PDF, "scan.bin", "application/octet-stream"))).to.deep.equal({
        mimeType: "application/pdf",
        extension: "pdf",
      });
    });

    it("refuses an empty file with reason EMPTY", async function () {
      const error = await refusal(checkUpload(await upload(Buffer.alloc(0), "a.pdf")));
      expect(error.details?.reason).to.equal("EMPTY");
    });

    it("refuses bytes of another type with reason UNSUPPORTED_TYPE, whatever the claims", async function () {
      const error = await refusal(checkUpload(await upload(Buffer.from("GIF89a......"), "a.pdf", "application/pdf")));
      expect(error.details?.reason).to.equal("UNSUPPORTED_TYPE");
    });

    it("refuses PNG bytes named .pdf, or sent as application/pdf, with reason DISGUISED", async function () {
      const byName = await refusal(checkUpload(await upload(PNG, "scan.pdf")));
      expect(byName.details).to.include({
        reason: "DISGUISED",
        detectedType: "image/png",
        claimedType: "application/pdf",
        claimedBy: "filename",
      });
      const byType = await refusal(checkUpload(await upload(PNG, "scan.png", "application/pdf")));
      expect(byType.details).to.include({ reason: "DISGUISED", claimedBy: "contentType" });
    });
  });
});
