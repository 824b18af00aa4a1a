import { expect } from "chai";
import {
  contentDisposition,
  decodeKeyToken,
  encodeKeyToken,
  MAX_URL_LIFETIME_SECONDS,
  checkLifetime,
  sanitizeDownloadName,
  signLocalUrl,
  verifyLocalUrl,
} from "../../api/src/storage/signedUrl.ts";

const secret = Buffer.alloc(32, 7);
const key = "requests/0b6e/documents/1/v1.pdf";
const NOW = 1_800_000_000;

function parts(url: string) {
  const parsed = new URL(url);
  const token = parsed.pathname.split("/").pop()!;
  return { parsed, token, query: Object.fromEntries(parsed.searchParams) as Record<string, string> };
}

describe("signedUrl (api/src/storage/signedUrl.ts)", function () {
  it("signs a URL under the files route that verifies to its key and download name", function () {
    const url = signLocalUrl({
      secret,
      publicBaseUrl: "http://h.example/",
      key,
      expires: NOW + 60,
      downloadName: "Plan é.pdf",
    });
    const { parsed, token, query } = parts(url);
    expect(parsed.origin + parsed.pathname).to.equal(`http://h.example/api/v1/files/${encodeKeyToken(key)}`);
    expect(query.signature).to.match(/^[0-9a-f]{64}$/);
    expect(verifyLocalUrl(secret, token, query, NOW)).to.deep.equal({ ok: true, key, downloadName: "Plan é.pdf" });
  });

  it("refuses the URL once expired, and any change to it", function () {
    const { token, query } = parts(signLocalUrl({ secret, publicBaseUrl: "http://h", key, expires: NOW + 60 }));
    expect(verifyLocalUrl(secret, token, query, NOW + 60).ok).to.equal(true);
    expect(verifyLocalUrl(secret, token, query, NOW + 61)).to.deep.equal({ ok: false, reason: "EXPIRED" });
    expect(verifyLocalUrl(secret, token, { ...query, expires: String(NOW + 3600) }, NOW)).to.deep.equal({
      ok: false,
      reason: "INVALID",
    });
    expect(verifyLocalUrl(secret, token, { ...query, name: "other.pdf" }, NOW)).to.deep.equal({
      ok: false,
      reason: "INVALID",
    });
    expect(verifyLocalUrl(secret, encodeKeyToken("requests/other.pdf"), query, NOW).ok).to.equal(false);
    expect(verifyLocalUrl(Buffer.alloc(32, 8), token, query, NOW).ok).to.equal(false);
    const flipped = query.signature.slice(0, -1) + (query.signature.endsWith("0") ? "1" : "0");
    expect(verifyLocalUrl(secret, token, { ...query, signature: flipped }, NOW).ok).to.equal(false);
  });

  it("decodes only canonical tokens of valid keys (no path can leave the store)", function () {
    expect(decodeKeyToken(encodeKeyToken(key))).to.equal(key);
    expect(decodeKeyToken(encodeKeyToken("../etc/passwd"))).to.equal(undefined);
    expect(decodeKeyToken(encodeKeyToken("/absolute"))).to.equal(undefined);
    expect(decodeKeyToken(`${encodeKeyToken(key)}=`)).to.equal(undefined);
    expect(decodeKeyToken("a.b")).to.equal(undefined);
  });

  it("bounds lifetimes to 1 s .. 7 days", function () {
    expect(() => checkLifetime(1)).to.not.throw();
    expect(() => checkLifetime(MAX_URL_LIFETIME_SECONDS)).to.not.throw();
    for (const bad of [0, -1, 1.5, MAX_URL_LIFETIME_SECONDS + 1])
      expect(() => checkLifetime(bad), String(bad)).to.throw(RangeError);
  });

  it("sanitises download names and offers them as ASCII and RFC 8187 UTF-8", function () {
    expect(sanitizeDownloadName(' a/b\\c"d\u0000\n.pdf ')).to.equal("a_b_c_d.pdf");
    expect(sanitizeDownloadName("\u0001 ")).to.equal(undefined);
    expect(sanitizeDownloadName("x".repeat(200))).to.have.length(150);
    expect(contentDisposition(undefined)).to.equal("attachment");
    expect(contentDisposition("Plan é (1).pdf")).to.equal(
      `attachment; filename="Plan _ (1).pdf"; filename*=UTF-8''Plan%20%C3%A9%20%281%29.pdf`,
    );
  });
});
