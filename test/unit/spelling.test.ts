/**
 * What people read says "licence" (the product's spelling; docs/decisions.md, "Spelling"), while identifiers keep
 * the specification's (RESORT_LICENSE, licenseType) and OpenAPI keeps its own `info.license` field. Scans the
 * README, the docs and every source file of the API, the indexer and the scripts: the verification page's type
 * names, the demo's and the auditor's output, error messages and OpenAPI descriptions included.
 */
import { expect } from "chai";
import { readFileSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const SCANNED = ["README.md", "docs", "api/src", "api/public", "indexer/src", "scripts"];
const TEXT = /\.(ts|js|md|html|css|sql|json)$/;

/** "license" as a word (not inside an identifier such as RESORT_LICENSE or licenseType). */
const AMERICAN = /(?<![A-Za-z0-9_.])licen[sc]e[sd]?(?![A-Za-z0-9_])/gi;
/** Where the word is OpenAPI's field name, not prose: `license:`, `license?:`, `info.license`, `LicenseRef-…`. */
const FIELD = /^license\??:|^LicenseRef/;

function files(entry: string): string[] {
  const full = path.join(ROOT, entry);
  if (!statSync(full).isDirectory()) return TEXT.test(entry) ? [entry] : [];
  return readdirSync(full).flatMap((name) => files(path.join(entry, name)));
}

describe("spelling: what people read says licence", function () {
  it("has no 'license' in prose, messages or page text (identifiers and OpenAPI's info.license aside)", function () {
    const found: string[] = [];
    for (const file of SCANNED.flatMap(files)) {
      readFileSync(path.join(ROOT, file), "utf8")
        .split("\n")
        .forEach((line, i) => {
          for (const match of line.matchAll(AMERICAN)) {
            if (!/s/i.test(match[0].slice(5, 6))) continue; // "licence", "licenced": the product's spelling
            if (FIELD.test(line.slice(match.index))) continue;
            found.push(`${file}:${i + 1}: ${line.trim()}`);
          }
        });
    }
    expect(found, found.join("\n")).to.deep.equal([]);
  });

  it("would catch the word: the page's type names spell licence", function () {
    const page = readFileSync(path.join(ROOT, "api/public/verify/verify.js"), "utf8");
    expect(page).to.include('RESORT_LICENSE: "resort licence"').and.to.include('TRADE_LICENSE: "trade licence"');
    expect("a resort license".match(AMERICAN)).to.deep.equal(["license"]);
    expect("RESORT_LICENSE licenseType info.license".match(AMERICAN)).to.equal(null);
  });
});
