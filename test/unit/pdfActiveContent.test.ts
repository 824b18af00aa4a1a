/**
 * The PDF active-content scanner (api/src/storage/pdfActiveContent.ts, run in pdfScanWorker.ts): pdf.js finds what a
 * viewer would run under any filter, the raw layer finds the actions pdf.js does not report, a compression bomb is
 * refused in bounded time without holding the event loop, a scan that cannot finish refuses the upload, and
 * production refuses active PDFs by default.
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

const HEADER = Buffer.from("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n", "latin1");

/** Bytes of an object: a string of PDF syntax, or a stream dictionary (its /Length added) with its data. */
type PdfObject = string | { dictionary: string; data: Buffer };

function objectBytes(object: PdfObject): Buffer {
  if (typeof object === "string") return Buffer.from(object, "latin1");
  return Buffer.concat([
    Buffer.from(`<<${object.dictionary}/Length ${object.data.length}>>stream\n`, "latin1"),
    object.data,
    Buffer.from("\nendstream"),
  ]);
}

interface ObjectStream {
  filter: string;
  encode: (bytes: Buffer) => Buffer;
  /** Objects kept inside the object stream, by number. */
  objects: Record<number, string>;
}

/**
 * A well-formed PDF, as current generators write one: objects by number (object 1 is the catalog), some of them
 * packed into an object stream, and a cross-reference stream that says where each one is.
 */
function buildPdf(objects: Record<number, PdfObject>, packed?: ObjectStream): Buffer {
  const parts = [HEADER];
  let offset = HEADER.length;
  /** Cross-reference entries: [type, field 2, field 3] (1: at an offset; 2: in an object stream, at an index). */
  const entries = new Map<number, [number, number, number]>();
  const put = (number: number, object: PdfObject) => {
    entries.set(number, [1, offset, 0]);
    const bytes = Buffer.concat([Buffer.from(`${number} 0 obj\n`), objectBytes(object), Buffer.from("\nendobj\n")]);
    parts.push(bytes);
    offset += bytes.length;
  };
  for (const [number, object] of Object.entries(objects)) put(Number(number), object);
  const numbers = [...Object.keys(objects), ...Object.keys(packed?.objects ?? {})].map(Number);
  let size = Math.max(...numbers) + 1;
  if (packed) {
    const streamNumber = size++;
    let header = "";
    let body = "";
    Object.entries(packed.objects).forEach(([number, text], index) => {
      header += `${number} ${body.length} `;
      body += `${text}\n`;
      entries.set(Number(number), [2, streamNumber, index]);
    });
    const count = Object.keys(packed.objects).length;
    put(streamNumber, {
      dictionary: `/Type/ObjStm/N ${count}/First ${header.length}/Filter ${packed.filter}`,
      data: packed.encode(Buffer.from(header + body, "latin1")),
    });
  }
  const xrefNumber = size++;
  const xrefOffset = offset;
  entries.set(xrefNumber, [1, xrefOffset, 0]);
  const table = Buffer.alloc(size * 7);
  for (let number = 0; number < size; number++) {
    const [type, field2, field3] = entries.get(number) ?? [0, 0, 0];
    table.writeUInt8(type, number * 7);
    table.writeUInt32BE(field2, number * 7 + 1);
    table.writeUInt16BE(field3, number * 7 + 5);
  }
  put(xrefNumber, { dictionary: `/Type/XRef/Size ${size}/W [1 4 2]/Root 1 0 R`, data: table });
  parts.push(Buffer.from(`startxref\n${xrefOffset}\n%%EOF\n`));
  return Buffer.concat(parts);
}

/**
 * A plain PDF as a simple generator writes one: three pages of Helvetica text in Flate content streams, document
 * information, a classic cross-reference table.
 */
function generatedPdf(): Buffer {
  const objects: string[] = [
    "<</Type/Catalog/Pages 2 0 R/PageMode/UseNone/Lang(en-GB)>>",
    "<</Type/Pages/Kids [4 0 R 6 0 R 8 0 R]/Count 3>>",
    "<</Type/Font/Subtype/Type1/BaseFont/Helvetica/Encoding/WinAnsiEncoding>>",
  ];
  for (let page = 1; page <= 3; page++) {
    const number = objects.length + 1;
    const lines = Array.from({ length: 40 }, (_, i) => `(Licence application, page ${page}, line ${i + 1}) Tj T*`);
    const content = deflateSync(Buffer.from(`BT /F1 11 Tf 14 TL 72 760 Td ${lines.join(" ")} ET`, "latin1"));
    objects.push(
      `<</Type/Page/Parent 2 0 R/MediaBox [0 0 595 842]/Resources <</Font <</F1 3 0 R>>>>/Contents ${number + 1} 0 R>>`,
      `<</Filter/FlateDecode/Length ${content.length}>>stream\n${content.toString("latin1")}\nendstream`,
    );
  }
  objects.push("<</Producer(hand-built)/Title(Licence application)/CreationDate(D:20260101000000Z)>>");
  const parts = [HEADER];
  const offsets: number[] = [];
  let offset = HEADER.length;
  objects.forEach((object, index) => {
    offsets.push(offset);
    const bytes = Buffer.from(`${index + 1} 0 obj\n${object}\nendobj\n`, "latin1");
    parts.push(bytes);
    offset += bytes.length;
  });
  const xref = [
    `xref\n0 ${objects.length + 1}\n0000000000 65535 f\r\n`,
    ...offsets.map((o) => `${String(o).padStart(10, "0")} 00000 n\r\n`),
    `trailer\n<</Size ${objects.length + 1}/Root 1 0 R/Info ${objects.length} 0 R>>\nstartxref\n${offset}\n%%EOF\n`,
  ];
  parts.push(Buffer.from(xref.join(""), "latin1"));
  return Buffer.concat(parts);
}

/** Bytes without structure (no cross-reference data), for the raw layer's limits. */
function loosePdf(...objects: (string | Buffer)[]): Buffer {
  return Buffer.concat([
    HEADER,
    ...objects.map((o) => (Buffer.isBuffer(o) ? o : Buffer.from(`${o}\n`, "latin1"))),
    Buffer.from("trailer <</Root 1 0 R>>\n%%EOF\n"),
  ]);
}

const hexFlate = (bytes: Buffer) => Buffer.from(`${deflateSync(bytes).toString("hex")}>`);

/** LZWDecode in its simplest valid form: every byte a literal 9-bit code, the table cleared before it grows. */
function lzw(bytes: Buffer): Buffer {
  const codes: number[] = [];
  bytes.forEach((byte, i) => (i % 200 === 0 ? codes.push(256, byte) : codes.push(byte)));
  codes.push(257);
  const out = Buffer.alloc(Math.ceil((codes.length * 9) / 8));
  let bit = 0;
  for (const code of codes)
    for (let k = 8; k >= 0; k--, bit++) if ((code >> k) & 1) out[bit >> 3]! |= 0x80 >> (bit & 7);
  return out;
}

const lzwStream = (objects: Record<number, string>): ObjectStream => ({ filter: "/LZWDecode", encode: lzw, objects });
const PAGES = { 2: "<</Type/Pages/Kids [3 0 R]/Count 1>>" };
const page = (extra = "") => `<</Type/Page/Parent 2 0 R/MediaBox [0 0 595 842]${extra}>>`;

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
  this.timeout(30_000);
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
    bomb = await file("bomb.pdf", loosePdf("1 0 obj <</Type/Catalog>> endobj", ...streams));
    // A worker that has loaded pdf.js waits for the next scan: the timings below measure scans, not that load.
    expect(await findActiveContent(await file("warm.pdf", generatedPdf()))).to.deep.equal([]);
  });
  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("refuses a compression bomb (155 streams each inflating past the budget) within two seconds, the event loop ticking throughout", async function () {
    expect((await stat(bomb)).size).to.be.above(10_000_000);
    const { result, ms, longestGap, ticks } = await timed(() => findActiveContent(bomb));
    expect(result).to.deep.equal(["SCAN_LIMIT_EXCEEDED"]);
    // About 130 ms of CPU; the bound leaves room for a busy machine (inflating all 10 GB takes several seconds).
    expect(ms, "scan time").to.be.below(2_000);
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

  it("finds JavaScript in an object stream under LZWDecode, and under ASCIIHexDecode + FlateDecode", async function () {
    const js = "<</S/JavaScript/JS(app.alert\\(1\\))>>";
    const inLzw = await file(
      "lzw.pdf",
      buildPdf({}, lzwStream({ 1: "<</Type/Catalog/Pages 2 0 R/OpenAction 4 0 R>>", ...PAGES, 3: page(), 4: js })),
    );
    expect(await findActiveContent(inLzw)).to.deep.equal(["JAVASCRIPT", "OPEN_ACTION"]);
    // The catalog names its scripts through a name tree: pdf.js resolves 5 0 R, then 4 0 R, all inside the stream.
    const inHex = await file(
      "hex.pdf",
      buildPdf(
        {},
        {
          filter: "[/ASCIIHexDecode /FlateDecode]",
          encode: hexFlate,
          objects: {
            1: "<</Type/Catalog/Pages 2 0 R/Names <</JavaScript 5 0 R>>>>",
            ...PAGES,
            3: page(),
            4: js,
            5: "<</Names [(init) 4 0 R]>>",
          },
        },
      ),
    );
    expect(await findActiveContent(inHex)).to.deep.equal(["JAVASCRIPT"]);
  });

  describe("what pdf.js reports, with every object in an LZW object stream the raw layer cannot read", function () {
    const scan = async (name: string, objects: Record<number, PdfObject>, packed: Record<number, string>) =>
      findActiveContent(await file(`${name}.pdf`, buildPdf(objects, lzwStream(packed))));
    const catalog = (extra = "") => `<</Type/Catalog/Pages 2 0 R${extra}>>`;

    it("finds a document OpenAction that runs JavaScript", async function () {
      const packed = { 1: catalog("/OpenAction <</S/JavaScript/JS(this.print\\(\\))>>"), ...PAGES, 3: page() };
      expect(await scan("open-js", {}, packed)).to.deep.equal(["JAVASCRIPT", "OPEN_ACTION"]);
    });

    it("finds a page's additional actions (JavaScript on opening the page)", async function () {
      const packed = { 1: catalog(), ...PAGES, 3: page("/AA <</O <</S/JavaScript/JS(x=1)>>>>") };
      expect(await scan("page-aa", {}, packed)).to.deep.equal(["JAVASCRIPT", "ADDITIONAL_ACTIONS"]);
    });

    it("finds a link annotation's URI", async function () {
      const link = "<</Type/Annot/Subtype/Link/Rect [0 0 99 20]/A <</S/URI/URI(https://example.com/)>>>>";
      const packed = { 1: catalog(), ...PAGES, 3: page("/Annots [4 0 R]"), 4: link };
      expect(await scan("link", {}, packed)).to.deep.equal(["URI_ACTION"]);
    });

    it("finds an embedded file, in the document's attachments and as a file attachment annotation", async function () {
      // The file's stream is outside the object stream, its dictionary without the optional /Type/EmbeddedFile.
      const payload = { 6: { dictionary: "", data: Buffer.from("MZ payload") } };
      const spec = "<</Type/Filespec/F(run.exe)/EF <</F 6 0 R>>>>";
      const inNames = { 1: catalog("/Names <</EmbeddedFiles <</Names [(run.exe) 5 0 R]>>>>"), ...PAGES, 3: page() };
      expect(await scan("attached", payload, { ...inNames, 5: spec })).to.deep.equal(["EMBEDDED_FILE"]);
      const annotation = "<</Type/Annot/Subtype/FileAttachment/Rect [0 0 20 20]/FS 5 0 R>>";
      const onPage = { 1: catalog(), ...PAGES, 3: page("/Annots [4 0 R]"), 4: annotation, 5: spec };
      expect(await scan("attachment-annotation", payload, onPage)).to.deep.equal(["EMBEDDED_FILE"]);
    });

    it("finds an XFA form", async function () {
      const xfa = { 5: { dictionary: "", data: Buffer.from("<xdp:xdp xmlns:xdp='http://ns.adobe.com/xdp/'/>") } };
      const packed = { 1: catalog("/AcroForm 4 0 R"), ...PAGES, 3: page(), 4: "<</Fields []/X#46A 5 0 R>>" };
      expect(await scan("xfa", xfa, packed)).to.deep.equal(["XFA"]);
    });

    it("finds a form field's JavaScript, and media annotations", async function () {
      const field = "<</Type/Annot/Subtype/Widget/FT/Tx/T(total)/Rect [0 0 99 20]/AA <</K <</S/JavaScript/JS(x)>>>>>>";
      const media = "<</Type/Annot/Subtype/Screen/Rect [0 0 99 99]>>";
      const packed = { 1: catalog("/AcroForm <</Fields [4 0 R]>>"), ...PAGES, 3: page("/Annots [4 0 R 5 0 R]") };
      expect(await scan("form", {}, { ...packed, 4: field, 5: media })).to.deep.equal([
        "JAVASCRIPT",
        "ADDITIONAL_ACTIONS",
        "RICH_MEDIA",
      ]);
    });
  });

  it("finds what pdf.js does not report (Launch, SubmitForm, an OpenAction or AA that is no script, a link's script) in plain objects and Flate object streams", async function () {
    const launch = await file(
      "launch.pdf",
      buildPdf(
        { 3: page("/AA <</C <</S/SubmitForm/F(https://example.com/)>>>>") },
        {
          filter: "/FlateDecode",
          encode: deflateSync,
          objects: { 1: "<</Type/Catalog/Pages 2 0 R/OpenAction <</S/Launch/F(cmd.exe)>>>>", ...PAGES },
        },
      ),
    );
    expect(await findActiveContent(launch)).to.deep.equal([
      "LAUNCH_ACTION",
      "OPEN_ACTION",
      "ADDITIONAL_ACTIONS",
      "SUBMIT_FORM",
    ]);
    const linkScript = await file(
      "link-script.pdf",
      buildPdf(
        { 1: "<</Type/Catalog/Pages 2 0 R>>", ...PAGES, 3: page("/Annots [4 0 R]") },
        {
          filter: "/FlateDecode",
          encode: deflateSync,
          objects: { 4: "<</Type/Annot/Subtype/Link/Rect [0 0 9 9]/A <</S/J#61vaScript/JS(app.alert\\(1\\))>>>>" },
        },
      ),
    );
    expect(await findActiveContent(linkScript)).to.deep.equal(["JAVASCRIPT"]);
  });

  it("accepts a PDF whose only finding is a link where active PDFs are refused, showing the link", async function () {
    const link = "<</Type/Annot/Subtype/Link/Rect [0 0 99 20]/A <</S/URI/URI(https://example.com/)>>>>";
    const linked = await file(
      "linked.pdf",
      buildPdf({ 1: "<</Type/Catalog/Pages 2 0 R>>", ...PAGES, 3: page("/Annots [4 0 R]"), 4: link }),
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
      buildPdf({ 1: "<</Type/Catalog/Pages 2 0 R/OpenAction <</S/JavaScript/JS(x)>>>>", ...PAGES, 3: page() }),
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

  it("passes a clean three-page PDF as a generator writes it", async function () {
    expect(await findActiveContent(await file("generated.pdf", generatedPdf()))).to.deep.equal([]);
  });

  it("passes a clean PDF with a plain /OpenAction destination, name-like bytes inside binary data, a large Flate image", async function () {
    // Image bytes that happen to read "/JS" and "/AA" (as random bytes do, once per few MB or 65 KB) are not names.
    const jpeg = Buffer.concat([
      Buffer.from([0xff, 0xd8, 0xff, 0xe0]),
      Buffer.from("/JS\xff\x01/AA\x80\x81", "latin1"),
    ]);
    // 80 MB of pixels: more than the decode budget, but an image's bytes are never parsed as objects.
    const pixels = deflateSync(Buffer.alloc(80 * 1024 * 1024, 0xff));
    const clean = await file(
      "clean.pdf",
      buildPdf(
        {
          1: "<</Type/Catalog/Pages 2 0 R/OpenAction [3 0 R /Fit]>>",
          ...PAGES,
          3: page("/Resources <</XObject <</I1 5 0 R/I2 6 0 R>>>>"),
          5: { dictionary: "/Type/XObject/Subtype/Image/Width 1/Height 1/Filter/DCTDecode", data: jpeg },
          6: {
            dictionary: "/Type/XObject/Subtype/Image/Width 8192/Height 3413/BitsPerComponent 8/Filter/FlateDecode",
            data: pixels,
          },
        },
        {
          filter: "/FlateDecode",
          encode: deflateSync,
          objects: { 7: "<</Type/Font/Subtype/Type1/BaseFont/Helvetica>>" },
        },
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

  it("refuses when pdf.js decodes more than the memory cap outside the worker's heap (a RunLength object stream)", async function () {
    this.timeout(60_000);
    // The catalog sits 160 MB into its object stream, behind spaces written as RunLength runs (two bytes for 128
    // spaces): only pdf.js decodes them, into one buffer that doubles as it grows (to 256 MB, the old one still
    // held) and that the worker's heap limit does not count.
    const gap = 160 * 1024 * 1024;
    const header = `1 ${gap} `;
    const spaces = (count: number) =>
      Buffer.concat([
        Buffer.alloc((count >> 7) * 2, Buffer.from([129, 0x20])),
        Buffer.from([257 - (count % 128), 0x20]),
      ]);
    const literal = (text: string) => Buffer.concat([Buffer.from([text.length - 1]), Buffer.from(text, "latin1")]);
    // buildPdf writes /First as the length of the header it would write, "1 0 ".
    const data = Buffer.concat([
      literal(header),
      spaces("1 0 ".length + gap - header.length),
      literal("<</Type/Catalog/Pages 2 0 R>>"),
      Buffer.from([128]),
    ]);
    const objects = { 1: "<</Type/Catalog/Pages 2 0 R>>" };
    const deep = await file(
      "runlength.pdf",
      buildPdf({ ...PAGES, 3: page() }, { filter: "/RunLengthDecode", encode: () => data, objects }),
    );
    // Only the memory cap stops it: given the memory, pdf.js decodes it all and finds a clean file.
    const unlimitedTime = { timeoutMs: 60_000, limits: { maxScanMs: 60_000 } };
    expect(await findActiveContent(deep, unlimitedTime)).to.deep.equal(["SCAN_LIMIT_EXCEEDED"]);
    expect(await findActiveContent(deep, { ...unlimitedTime, maxExternalMemoryMb: 4096 })).to.deep.equal([]);
  });

  it("refuses when the scan exceeds its stream, page or annotation cap", async function () {
    const many = Array.from({ length: 20 }, (_, i) =>
      Buffer.from(
        `${i + 2} 0 obj <</Filter/FlateDecode>>stream\n${deflateSync("1 0 <</A 1>>").toString("latin1")}\nendstream endobj\n`,
        "latin1",
      ),
    );
    const manyStreams = await file("many.pdf", loosePdf("1 0 obj <</Type/Catalog>> endobj", ...many));
    expect(await findActiveContent(manyStreams, { limits: { maxStreams: 10 } })).to.deep.equal(["SCAN_LIMIT_EXCEEDED"]);
    const generated = await file("pages.pdf", generatedPdf());
    expect(await findActiveContent(generated, { limits: { maxPages: 2 } })).to.deep.equal(["SCAN_LIMIT_EXCEEDED"]);
    const note = "<</Type/Annot/Subtype/Text/Rect [0 0 9 9]/Contents(note)>>";
    const annotated = await file(
      "annotated.pdf",
      buildPdf({ 1: "<</Type/Catalog/Pages 2 0 R>>", ...PAGES, 3: page("/Annots [4 0 R 5 0 R]"), 4: note, 5: note }),
    );
    expect(await findActiveContent(annotated)).to.deep.equal([]);
    expect(await findActiveContent(annotated, { limits: { maxAnnotations: 1 } })).to.deep.equal([
      "SCAN_LIMIT_EXCEEDED",
    ]);
  });

  it("refuses what pdf.js cannot open (SCAN_FAILED): garbage behind a PDF header, a missing file", async function () {
    const garbage = await file("garbage.pdf", Buffer.from(`%PDF-1.7\n${"garbage ".repeat(500)}\n%%EOF\n`));
    expect(await findActiveContent(garbage)).to.deep.equal(["SCAN_FAILED"]);
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
