/**
 * The PDF active-content scanner (api/src/storage/pdfActiveContent.ts, run in pdfScanWorker.ts): a compression bomb is
 * refused in bounded time without holding the event loop, every filter chain is decoded, actions are findings, a
 * scan that cannot finish refuses the upload, and production refuses active PDFs by default.
 */
import { expect } from "chai";
import { mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { deflateSync } from "node:zlib";
import { loadSettings } from "../../api/src/config.ts";
import { acceptUpload } from "../../api/src/storage/acceptUpload.ts";
import { findActiveContent } from "../../api/src/storage/pdfActiveContent.ts";
import { InvalidFileError } from "../../api/src/storage/storageErrors.ts";

const HEADER = "%PDF-1.7\n%\xe2\xe3\xcf\xd3\n";

/** A PDF of the given objects (strings or already-built byte sections). */
function pdf(...objects: (string | Buffer)[]): Buffer {
  return Buffer.concat([
    Buffer.from(HEADER, "latin1"),
    ...objects.map((o) => (Buffer.isBuffer(o) ? o : Buffer.from(`${o}\n`, "latin1"))),
    Buffer.from("trailer <</Root 1 0 R>>\n%%EOF\n"),
  ]);
}

/** An object stream holding `objects` as PDF syntax (its header of integer pairs first), stored through `encode`. */
function objectStream(number: number, filter: string, encode: (b: Buffer) => Buffer, objects: string): Buffer {
  const data = encode(Buffer.from(`20 0 ${objects}`, "latin1"));
  return Buffer.concat([
    Buffer.from(`${number} 0 obj <</Type/ObjStm/N 1/First 5/Length ${data.length}/Filter ${filter}>>stream\n`),
    data,
    Buffer.from("\nendstream endobj\n"),
  ]);
}

const hex = (b: Buffer) => Buffer.from(`${b.toString("hex").replace(/(.{64})/g, "$1\n")}>`);

function ascii85(bytes: Buffer): Buffer {
  let out = "";
  for (let i = 0; i < bytes.length; i += 4) {
    const chunk = Buffer.alloc(4);
    bytes.copy(chunk, 0, i, Math.min(i + 4, bytes.length));
    let value = chunk.readUInt32BE(0);
    const digits: string[] = [];
    for (let k = 0; k < 5; k++) {
      digits.unshift(String.fromCharCode((value % 85) + 33));
      value = Math.floor(value / 85);
    }
    const used = Math.min(4, bytes.length - i) + 1;
    out += used === 5 && digits.join("") === "!!!!!" ? "z" : digits.slice(0, used).join("");
  }
  return Buffer.from(`${out}~>`);
}

let dir: string;
async function file(name: string, bytes: Buffer): Promise<string> {
  const filePath = path.join(dir, name);
  await writeFile(filePath, bytes);
  return filePath;
}

/** Runs `work` while a 10 ms interval ticks; answers its result, its duration and the longest gap between ticks. */
async function timed<T>(work: () => Promise<T>): Promise<{ result: T; ms: number; longestGap: number; ticks: number }> {
  let last = performance.now();
  let longestGap = 0;
  let ticks = 0;
  const interval = setInterval(() => {
    const now = performance.now();
    longestGap = Math.max(longestGap, now - last);
    last = now;
    ticks++;
  }, 10);
  const start = performance.now();
  try {
    const result = await work();
    const ms = performance.now() - start;
    longestGap = Math.max(longestGap, performance.now() - last);
    return { result, ms, longestGap, ticks };
  } finally {
    clearInterval(interval);
  }
}

describe("PDF active content scanner (api/src/storage/pdfActiveContent.ts)", function () {
  this.timeout(20_000);
  /** 155 Flate streams of 66 KB each, every one inflating to 65 MB of zeros: about 10 GB in all. */
  let bomb: string;

  before(async function () {
    dir = await mkdtemp(path.join(tmpdir(), "pdf-scan-"));
    const zeros = deflateSync(Buffer.alloc(65 * 1024 * 1024));
    const streams: Buffer[] = [];
    for (let i = 0; i < 155; i++)
      streams.push(
        Buffer.from(`${i + 2} 0 obj <</Length ${zeros.length}/Filter/FlateDecode>>stream\n`),
        zeros,
        Buffer.from("\nendstream endobj\n"),
      );
    bomb = await file("bomb.pdf", pdf("1 0 obj <</Type/Catalog>> endobj", ...streams));
    // Load the worker's modules once, so the timings below measure scans rather than the first compilation.
    await findActiveContent(await file("warm.pdf", pdf("1 0 obj <</Type/Catalog>> endobj")));
  });
  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("refuses a compression bomb (155 streams each inflating past the budget) in well under a second, the event loop ticking throughout", async function () {
    expect((await stat(bomb)).size).to.be.above(10_000_000);
    const { result, ms, longestGap, ticks } = await timed(() => findActiveContent(bomb));
    expect(result).to.deep.equal(["SCAN_LIMIT_EXCEEDED"]);
    expect(ms, "scan time").to.be.below(1_000);
    // A 10 ms interval kept ticking: the inflation ran off the event loop.
    expect(longestGap, "longest gap between 10 ms ticks").to.be.below(150);
    expect(ticks).to.be.at.least(Math.floor(ms / 50));
  });

  it("refuses the bomb at upload (400 INVALID_FILE, reason UNSCANNABLE) even where active PDFs are only flagged", async function () {
    const size = (await stat(bomb)).size;
    const upload = { path: bomb, size, sha256: "0".repeat(64), originalFilename: "a.pdf", declaredType: null };
    const refused = await acceptUpload(upload, { refuseActivePdf: false }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).to.be.instanceOf(InvalidFileError);
    expect((refused as InvalidFileError).details).to.deep.equal({
      reason: "UNSCANNABLE",
      activeContent: ["SCAN_LIMIT_EXCEEDED"],
    });
  });

  it("finds JavaScript inside an ASCIIHexDecode object stream and inside an ASCII85Decode + FlateDecode one", async function () {
    const js = "<</S/JavaScript/JS(app.alert\\(1\\))>>";
    const inHex = await file(
      "hex.pdf",
      pdf("1 0 obj <</Type/Catalog>> endobj", objectStream(2, "/ASCIIHexDecode", hex, js)),
    );
    expect(await findActiveContent(inHex)).to.deep.equal(["JAVASCRIPT"]);
    const in85 = await file(
      "a85.pdf",
      pdf(
        "1 0 obj <</Type/Catalog>> endobj",
        objectStream(2, "[/ASCII85Decode /FlateDecode]", (b) => ascii85(deflateSync(b)), "<</S/Launch/F(cmd.exe)>>"),
        objectStream(3, "/A85", ascii85, "<</Names <</J#61vaScript 9 0 R>>>>"),
      ),
    );
    expect(await findActiveContent(in85)).to.deep.equal(["JAVASCRIPT", "LAUNCH_ACTION"]);
  });

  it("finds /OpenAction with an action, /AA, /URI, /SubmitForm and /RichMedia, also inside a Flate object stream", async function () {
    const actions = await file(
      "actions.pdf",
      pdf(
        "1 0 obj <</Type/Catalog/OpenAction 5 0 R>> endobj",
        "4 0 obj <</Type/Annot/Subtype/Link/A <</S/URI/URI(https://example.com/)>>>> endobj",
        objectStream(2, "/FlateDecode", deflateSync, "<</Type/Annot/Subtype/Widget/AA <</K 7 0 R>>>>"),
      ),
    );
    expect(await findActiveContent(actions)).to.deep.equal(["OPEN_ACTION", "ADDITIONAL_ACTIONS", "URI_ACTION"]);
    const forms = await file(
      "forms.pdf",
      pdf(
        "1 0 obj <</Type/Catalog/OpenAction <</S/SubmitForm/F(x)>>>> endobj",
        "3 0 obj <</Subtype/RichMedia>> endobj",
      ),
    );
    expect(await findActiveContent(forms)).to.deep.equal(["OPEN_ACTION", "SUBMIT_FORM", "RICH_MEDIA"]);
  });

  it("accepts a PDF whose only finding is a link where active PDFs are refused, showing the link", async function () {
    const linked = await file(
      "linked.pdf",
      pdf(
        "1 0 obj <</Type/Catalog>> endobj",
        "4 0 obj <</Type/Annot/Subtype/Link/A <</S/URI/URI(https://example.com/)>>>> endobj",
      ),
    );
    const upload = {
      path: linked,
      size: (await stat(linked)).size,
      sha256: "0".repeat(64),
      originalFilename: "l.pdf",
      declaredType: null,
    };
    expect((await acceptUpload(upload, { refuseActivePdf: true })).activeContent).to.deep.equal(["URI_ACTION"]);
    const scripted = await file(
      "scripted.pdf",
      pdf("1 0 obj <</Type/Catalog/OpenAction <</S/JavaScript/JS(x)>>>> endobj"),
    );
    const refused = await acceptUpload(
      { ...upload, path: scripted, size: (await stat(scripted)).size },
      { refuseActivePdf: true },
    ).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect((refused as InvalidFileError).details).to.deep.include({ reason: "ACTIVE_CONTENT" });
  });

  it("passes a clean PDF: a plain /OpenAction destination, name-like bytes inside binary data, a large Flate image", async function () {
    // Image bytes that happen to read "/JS" and "/AA" (as random bytes do, once per few MB or 65 KB) are not names.
    const binary = Buffer.concat([
      Buffer.from([0xff, 0xd8, 0xff, 0xe0]),
      Buffer.from("/JS\xff\x01/AA\x80\x81", "latin1"),
    ]);
    // 80 MB of pixels: more than the decode budget, but an image's bytes are never parsed as objects.
    const pixels = deflateSync(Buffer.alloc(80 * 1024 * 1024, 0xff));
    const clean = await file(
      "clean.pdf",
      pdf(
        "1 0 obj <</Type/Catalog/Pages 2 0 R/OpenAction [3 0 R /Fit]>> endobj",
        "3 0 obj <</Type/Page/Parent 2 0 R/Contents 4 0 R>> endobj",
        Buffer.concat([
          Buffer.from(`5 0 obj <</Subtype/Image/Filter/DCTDecode/Length ${binary.length}>>stream\n`),
          binary,
          Buffer.from("\nendstream endobj\n"),
        ]),
        Buffer.concat([
          Buffer.from(
            `6 0 obj <</Subtype/Image/Width 8192/Height 3413/Filter/FlateDecode/Length ${pixels.length}>>stream\n`,
          ),
          pixels,
          Buffer.from("\nendstream endobj\n"),
        ]),
        objectStream(7, "/FlateDecode", deflateSync, "<</Type/Font/Subtype/Type1/BaseFont/Helvetica>>"),
      ),
    );
    expect(await findActiveContent(clean)).to.deep.equal([]);
  });

  it("refuses when the worker exceeds its time limit: terminated, SCAN_LIMIT_EXCEEDED, answered within the limit", async function () {
    // No budget or scan-time limit inside the worker: only the wall-clock limit stops this 10 GB of inflation.
    const { result, ms } = await timed(() =>
      findActiveContent(bomb, { timeoutMs: 300, limits: { maxDecodedBytes: 2 ** 40, maxScanMs: 600_000 } }),
    );
    expect(result).to.deep.equal(["SCAN_LIMIT_EXCEEDED"]);
    expect(ms).to.be.below(1_000);
  });

  it("refuses when the scan exceeds its stream cap, and when the worker fails (SCAN_FAILED)", async function () {
    const many = Array.from({ length: 20 }, (_, i) => objectStream(i + 2, "/FlateDecode", deflateSync, "<</A 1>>"));
    const manyStreams = await file("many.pdf", pdf("1 0 obj <</Type/Catalog>> endobj", ...many));
    expect(await findActiveContent(manyStreams)).to.deep.equal([]);
    expect(await findActiveContent(manyStreams, { limits: { maxStreams: 10 } })).to.deep.equal(["SCAN_LIMIT_EXCEEDED"]);
    expect(await findActiveContent(path.join(dir, "gone.pdf"))).to.deep.equal(["SCAN_FAILED"]);
  });

  it("refuses active PDFs by default in production (REFUSE_ACTIVE_PDF), and only flags them elsewhere unless set", function () {
    const refuse = (env: NodeJS.ProcessEnv) => loadSettings(["refuseActivePdf"], env).refuseActivePdf;
    expect(refuse({ NODE_ENV: "production" })).to.equal(true);
    expect(refuse({ NODE_ENV: "production", REFUSE_ACTIVE_PDF: "false" })).to.equal(false);
    expect(refuse({ NODE_ENV: "development" })).to.equal(false);
    expect(refuse({})).to.equal(false);
    expect(refuse({ NODE_ENV: "test", REFUSE_ACTIVE_PDF: "true" })).to.equal(true);
  });
});
