/** Real, minimal files of each accepted type (and impostors), made in memory. */
import { deflateSync } from "node:zlib";

export function pdf(text = "licence document"): Buffer {
  const body = `%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj\n3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 200 200]>>endobj\n% ${text}\ntrailer<</Root 1 0 R>>\n%%EOF\n`;
  return Buffer.from(body);
}

const crcTable = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function crc32(buffer: Buffer): number {
  let crc = 0xffffffff;
  for (const byte of buffer) crc = crcTable[(crc ^ byte) & 0xff] ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}
function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const typed = Buffer.concat([Buffer.from(type, "ascii"), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(typed));
  return Buffer.concat([length, typed, crc]);
}

/** A valid PNG of `size`×`size` pixels of one colour, with `note` in a tEXt chunk (so each note gives new bytes). */
export function png(note = "licence", seed = 1, size = 4): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8-bit RGB
  const row = Buffer.concat([Buffer.from([0]), Buffer.alloc(size * 3, seed & 0xff)]);
  const pixels = Buffer.concat(Array.from({ length: size }, () => row));
  const textChunk = chunk("tEXt", Buffer.concat([Buffer.from("Comment\0"), Buffer.from(note)]));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", header),
    textChunk,
    chunk("IDAT", deflateSync(pixels)),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

/** A JPEG: SOI, a JFIF APP0 segment, a comment carrying `text`, EOI (enough for type detection by bytes). */
export function jpeg(text = "photo"): Buffer {
  const app0 = Buffer.from([
    0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00,
  ]);
  const comment = Buffer.from(text);
  const com = Buffer.concat([
    Buffer.from([0xff, 0xfe]),
    Buffer.from([(comment.length + 2) >> 8, (comment.length + 2) & 0xff]),
    comment,
  ]);
  return Buffer.concat([Buffer.from([0xff, 0xd8]), app0, com, Buffer.from([0xff, 0xd9])]);
}

export const executable = () => Buffer.concat([Buffer.from("MZ"), Buffer.alloc(200, 0x90)]);
export const text = (content = "just some text, not a document") => Buffer.from(content);
