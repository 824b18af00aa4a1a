/**
 * The public verification page in a real browser (Debian's headless Chromium driven by playwright-core) on a
 * phone-sized screen: the four ways in (token number, QR code, a document dropped in and hashed in the browser, a
 * pasted wallet credential), valid and invalid. Screenshots are kept in test-results/verification-page/.
 */
import { createHash } from "node:crypto";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { expect } from "chai";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { digest } from "@sd-jwt/crypto-nodejs";
import { SDJwtVcInstance } from "@sd-jwt/sd-jwt-vc";
import { ensureChromium } from "../../scripts/ensureChromium.ts";
import { applicantToken, clientToken } from "./support/authClient.ts";
import { createDepartment, departmentClient } from "./support/departmentClient.ts";
import { apiClient as http } from "./support/httpClient.ts";
import { createDriver, type Driver } from "./support/platformDriver.ts";
import { pdf, png } from "./support/sampleFiles.ts";
import { seedWorkflow } from "./support/seedWorkflow.ts";
import { current } from "./support/stackFixture.ts";
import { letters } from "./support/sessions.ts";
import { stage, workflow } from "./support/workflowDefinition.ts";

const SHOTS = path.join(process.cwd(), "test-results", "verification-page");
// Chromium's background traffic is refused by this closed network: keep it quiet (see the toolchain notes).
const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

describe("verification page (headless Chromium, phone-sized screen)", function () {
  const run = `${Date.now() % 1e7}`;
  const tag = letters(run);
  const code = `PAGE_${tag}`;
  let driver: Driver;
  let api: string;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const requests: string[] = [];
  const licences: Record<string, { id: string; tokenId: number; requestNumber: string; file: Buffer }> = {};
  let qr: { payload: string; url: string };
  let proof: { applicantId: string; salt: string };
  let applicantBearer: string;

  before(async function () {
    const stack = current();
    api = stack.api.url;
    driver = await createDriver(stack);
    const adminToken = await clientToken(api, stack.admin.clientId, stack.admin.clientSecret, "admin");
    const admin = http(api, adminToken);
    const department = departmentClient(
      api,
      await createDepartment(api, adminToken, { code, name: "Page Licensing Office" }),
    );
    await seedWorkflow(
      stack,
      driver,
      workflow(
        "BUILDING_PERMIT",
        "Building permit (page test)",
        stage("check", "Check", "SEQUENTIAL", { [code]: ["SITE_PLAN"] }),
      ),
    );
    applicantBearer = await applicantToken(api, { id: `page-${run}`, name: "Paula Page" });
    const applicant = http(api, applicantBearer);
    for (const label of ["valid", "revoked"]) {
      const created = await applicant.post("/requests", { applicantId: `page-${run}`, requestType: "BUILDING_PERMIT" });
      const file = pdf(`page ${label} ${run}`);
      const uploaded = await applicant.upload(
        "POST",
        `/requests/${created.body.requestId}/documents`,
        file,
        "plan.pdf",
        { docType: "SITE_PLAN" },
      );
      await applicant.post(`/requests/${created.body.requestId}/submit`);
      expect(
        (
          await department.post(`/requests/${created.body.requestId}/approve`, {
            remarks: "ok",
            reviewedDocuments: [uploaded.body.documentId],
          })
        ).status,
      ).to.equal(200);
      const detail = (await applicant.get(`/requests/${created.body.requestId}`)).body;
      licences[label] = {
        id: created.body.requestId,
        tokenId: detail.tokenId,
        requestNumber: detail.requestNumber,
        file,
      };
    }
    expect(
      (await admin.post(`/requests/${licences.revoked.id}/revoke`, { reasonCode: 4, reason: "fraud" })).status,
    ).to.equal(200);
    qr = (await applicant.get(`/requests/${licences.valid.id}/qr?format=json`)).body as typeof qr;
    proof = (await applicant.get(`/requests/${licences.valid.id}/identity-proof`)).body as typeof proof;

    await mkdir(SHOTS, { recursive: true });
    browser = await chromium.launch({ executablePath: await ensureChromium(), headless: true, args: CHROMIUM_ARGS });
    context = await browser.newContext({
      viewport: { width: 390, height: 844 },
      deviceScaleFactor: 2,
      isMobile: true,
      hasTouch: true,
    });
    page = await context.newPage();
    page.on("request", (request) => requests.push(`${request.method()} ${request.url()}`));
  });
  after(async () => {
    await browser?.close();
    await driver?.close();
  });

  const verdict = async () => {
    await page.waitForFunction(
      () => !document.getElementById("result")!.hidden && document.getElementById("verdict")!.dataset.verdict,
    );
    return {
      code: await page.getAttribute("#verdict", "data-verdict"),
      text: (await page.textContent("#verdict"))!.trim(),
      message: (await page.textContent("#message"))!.trim(),
    };
  };
  const shot = (name: string) => page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
  const fitsTheScreen = () => page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);

  it("is linked from the home page and fits a phone's screen", async function () {
    await page.goto(`${api}/`);
    await page.click("text=Verify a licence or a document");
    await page.waitForURL(`${api}/verify`);
    expect(await page.textContent("h1")).to.equal("Verify a licence");
    expect(await fitsTheScreen()).to.equal(true);
  });

  it("by licence number: VALID in large plain words with details, approvals and the chain proof; REVOKED; an unknown number", async function () {
    await page.goto(`${api}/verify`);
    await page.fill("#token-input", String(licences.valid.tokenId));
    await page.click("#token-submit");
    const valid = await verdict();
    expect(valid).to.include({ code: "VALID", text: "Valid licence" });
    expect(valid.message).to.match(/^This licence is valid/);
    expect(await page.textContent("#details"))
      .to.include(licences.valid.requestNumber)
      .and.to.include("Paula Page");
    expect(await page.textContent("#approvals")).to.include("Page Licensing Office");
    expect(await page.textContent("#proof")).to.include(current().deployment.contracts.LicenceToken);
    expect(
      await page.evaluate(() => parseFloat(getComputedStyle(document.getElementById("verdict")!).fontSize)),
    ).to.be.at.least(24);
    expect(await fitsTheScreen()).to.equal(true);
    await shot("token-valid");

    await page.fill("#token-input", String(licences.revoked.tokenId));
    await page.click("#token-submit");
    await page.waitForFunction(() => document.getElementById("verdict")!.dataset.verdict === "REVOKED");
    expect((await verdict()).text).to.equal("Revoked");
    await shot("token-revoked");

    await page.fill("#token-input", "987654321");
    await page.click("#token-submit");
    await page.waitForFunction(() => document.getElementById("verdict")!.dataset.verdict === "UNKNOWN");
    expect((await verdict()).message).to.equal("No licence with this number exists.");
    await shot("token-unknown");
  });

  it("checks a holder's identity and salt against the commitment on chain: a match, a wrong salt, a malformed salt", async function () {
    await page.goto(`${api}/verify?token=${licences.valid.tokenId}`);
    expect((await verdict()).code).to.equal("VALID");
    await page.waitForSelector("#holder-form:not([hidden])");
    const check = async (applicantId: string, salt: string) => {
      await page.evaluate(() => delete document.getElementById("holder-result")!.dataset.matches);
      await page.fill("#holder-id", applicantId);
      await page.fill("#holder-salt", salt);
      await page.click("#holder-submit");
      await page.waitForFunction(() => document.getElementById("holder-result")!.dataset.matches !== undefined);
      return {
        matches: await page.getAttribute("#holder-result", "data-matches"),
        text: (await page.textContent("#holder-result"))!.trim(),
      };
    };
    const good = await check(proof.applicantId, proof.salt);
    expect(good.matches).to.equal("true");
    expect(good.text).to.match(/^Match/);
    expect(await fitsTheScreen()).to.equal(true);
    await shot("holder-match");
    const wrongSalt = `0x${(BigInt(proof.salt) ^ 1n).toString(16).padStart(64, "0")}`;
    expect((await check(proof.applicantId, wrongSalt)).matches).to.equal("false");
    expect((await check(`${proof.applicantId}x`, proof.salt)).matches).to.equal("false");
    expect((await check(proof.applicantId, "0x1234")).matches).to.equal("invalid");
  });

  it("offers the licence to the holder's wallet after a matching check: the QR image and the offer link, which redeems once", async function () {
    await page.goto(`${api}/verify?token=${licences.valid.tokenId}`);
    expect((await verdict()).code).to.equal("VALID");
    await page.fill("#holder-id", proof.applicantId);
    await page.fill("#holder-salt", proof.salt);
    await page.click("#holder-submit");
    await page.click("#wallet-offer");
    await page.waitForSelector("#wallet-offer-shown:not([hidden])");
    const image = await page.$eval("#wallet-qr", (img) => {
      const qr = img as HTMLImageElement;
      return { src: qr.src, width: qr.naturalWidth, alt: qr.alt };
    });
    expect(image.src).to.match(/^data:image\/svg\+xml,/);
    expect(image.width, "the image was drawn (the page's policy allows it)").to.be.greaterThan(0);
    expect(image.alt).to.match(/QR code/);
    expect(await page.textContent("#wallet-result")).to.match(
      /^Scan the code with your wallet app.* before .+\. It works once\.$/,
    );
    expect(await fitsTheScreen()).to.equal(true);
    await shot("holder-wallet-offer");

    const link = (await page.getAttribute("#wallet-link", "href"))!;
    expect(link).to.match(/^openid-credential-offer:\/\/\?credential_offer_uri=/);
    const reference = new URL(link).searchParams.get("credential_offer_uri")!;
    const offered = await (await fetch(reference)).json();
    expect(offered.credential_issuer).to.equal(api);
    const code = offered.grants["urn:ietf:params:oauth:grant-type:pre-authorized_code"]["pre-authorized_code"];
    const { rows } = await driver.core.pool.query(`SELECT request_id FROM credential_offers WHERE code_hash = $1`, [
      createHash("sha256").update(code).digest(),
    ]);
    expect(rows).to.deep.equal([{ request_id: licences.valid.id }]);
    const redeem = () =>
      fetch(`${api}/oid4vci/token`, {
        method: "POST",
        body: new URLSearchParams({
          grant_type: "urn:ietf:params:oauth:grant-type:pre-authorized_code",
          "pre-authorized_code": code,
        }),
      });
    expect((await redeem()).status).to.equal(200);
    expect((await redeem()).status).to.equal(400);
    // Another licence shown: the offer is gone from the page.
    await page.fill("#token-input", String(licences.revoked.tokenId));
    await page.click("#token-submit");
    await page.waitForFunction(() => document.getElementById("verdict")!.dataset.verdict === "REVOKED");
    expect(await page.isHidden("#wallet-block")).to.equal(true);
  });

  it("by QR code: the scanned link opens the verdict; a pasted altered code is INVALID_QR", async function () {
    await page.goto(qr.url);
    expect(await verdict()).to.include({ code: "VALID", text: "Valid licence" });
    expect(await page.textContent("#proof")).to.include("QR signed by");
    await shot("qr-valid");

    await page.goto(`${api}/verify`);
    await page.click("#tab-qr");
    const altered = qr.payload.replace(`.${licences.valid.tokenId}.`, `.${licences.revoked.tokenId}.`);
    await page.fill("#qr-input", altered);
    await page.click("#qr-submit");
    const invalid = await verdict();
    expect(invalid).to.include({ code: "INVALID_QR", text: "Invalid QR code" });
    expect(invalid.message).to.match(/altered/);
    await shot("qr-invalid");
  });

  it("by credential: a pasted vc+jwt and an SD-JWT presentation of the number alone are VALID with what they disclose; a tampered one is not", async function () {
    const download = async (format: string) =>
      (
        await fetch(`${api}/api/v1/requests/${licences.valid.id}/credential?format=${encodeURIComponent(format)}`, {
          headers: { authorization: `Bearer ${applicantBearer}` },
        })
      ).text();
    const paste = async (credential: string) => {
      await page.evaluate(() => delete document.getElementById("verdict")!.dataset.verdict);
      await page.fill("#credential-input", credential);
      await page.click("#credential-submit");
      return verdict();
    };
    await page.goto(`${api}/verify`);
    await page.click("#tab-credential");
    const vc = await download("vc+jwt");
    expect(await paste(vc)).to.include({ code: "VALID", text: "Valid licence" });
    expect(await page.textContent("#credential"))
      .to.include("W3C VC (vc+jwt)")
      .and.to.include("the platform's");
    expect(await page.textContent("#disclosed")).to.include(licences.valid.requestNumber);
    expect(await fitsTheScreen()).to.equal(true);
    await shot("credential-vc-valid");

    const numberOnly = await new SDJwtVcInstance({ hasher: digest, hashAlg: "sha-256" }).present(
      await download("dc+sd-jwt"),
      { licence_number: true },
    );
    expect(await paste(numberOnly)).to.include({ code: "VALID" });
    expect(await page.textContent("#credential"))
      .to.include("SD-JWT VC")
      .and.to.include("valid");
    const disclosed = await page.$$eval("#disclosed dt", (terms) => terms.map((t) => t.textContent));
    expect(disclosed).to.deep.equal(["Licence number"]);
    expect(await page.textContent("#disclosed"))
      .to.include(licences.valid.requestNumber)
      .and.not.include("Paula");
    await shot("credential-sd-jwt-number-only");

    // A QR code that holds the credential itself, scanned or pasted on the QR tab, is verified as a credential.
    await page.click("#tab-qr");
    await page.evaluate(() => delete document.getElementById("verdict")!.dataset.verdict);
    await page.fill("#qr-input", vc);
    await page.click("#qr-submit");
    expect(await verdict()).to.include({ code: "VALID" });
    expect(await page.isVisible("#credential-block")).to.equal(true);
    await page.click("#tab-credential");

    const [header, payload, signature] = vc.split(".");
    const altered = JSON.parse(Buffer.from(payload, "base64url").toString());
    altered.credentialSubject.licenceNumber = licences.revoked.requestNumber;
    const forged = [header, Buffer.from(JSON.stringify(altered)).toString("base64url"), signature].join(".");
    const refused = await paste(forged);
    expect(refused).to.include({ code: "INVALID_CREDENTIAL", text: "Invalid credential" });
    expect(refused.message).to.match(/signature/);
    expect(await page.isHidden("#details dd")).to.equal(true);
    await shot("credential-invalid");
  });

  it("by document: hashed in the browser (never uploaded); genuine, or not recorded", async function () {
    await page.goto(`${api}/verify`);
    await page.click("#tab-document");
    const before = requests.length;
    await page.setInputFiles("#document-input", {
      name: "plan.pdf",
      mimeType: "application/pdf",
      buffer: licences.valid.file,
    });
    const genuine = await verdict();
    expect(genuine).to.include({ code: "VALID", text: "Genuine document" });
    const hash = createHash("sha256").update(licences.valid.file).digest("hex");
    expect(await page.textContent("#document-hash")).to.equal(`SHA-256 ${hash}`);
    // The only request the page made: the hash lookup. The file's bytes went nowhere.
    expect(requests.slice(before)).to.deep.equal([`GET ${api}/api/v1/verify/document/${hash}`]);
    await shot("document-valid");

    await page.setInputFiles("#document-input", {
      name: "photo.png",
      mimeType: "image/png",
      buffer: png(`never anchored ${run}`),
    });
    await page.waitForFunction(() => document.getElementById("verdict")!.dataset.verdict === "UNKNOWN");
    expect(await verdict()).to.include({ text: "Not recorded" });
    await shot("document-unknown");
  });

  it("hashes the same without WebCrypto (plain HTTP on a phone): the page's fallback SHA-256 agrees", async function () {
    const inputs = ["", "abc", "x".repeat(55), "y".repeat(56), "z".repeat(64), "w".repeat(1000)];
    const results = await page.evaluate(async (texts) => {
      const hex = (bytes: Uint8Array) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
      const fallback = (globalThis as unknown as { sha256Fallback: (b: Uint8Array) => Uint8Array }).sha256Fallback;
      return Promise.all(texts.map(async (text) => hex(fallback(new TextEncoder().encode(text)))));
    }, inputs);
    expect(results).to.deep.equal(inputs.map((text) => createHash("sha256").update(text).digest("hex")));
  });
});
