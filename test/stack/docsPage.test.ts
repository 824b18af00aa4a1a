/**
 * The API reference at /docs and the decisions log at /docs/decisions in a real browser (Debian's headless Chromium
 * driven by playwright-core): rendered by Swagger UI served from this origin only, endpoints first, schemas and an
 * example per operation readable, nothing loaded from elsewhere, the CSP obeyed. Screenshots in test-results/docs/.
 */
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { expect } from "chai";
import { chromium, type Browser, type Page } from "playwright-core";
import { ensureChromium } from "../../scripts/ensureChromium.ts";
import { current } from "./support/stackFixture.ts";

const SHOTS = path.join(process.cwd(), "test-results", "docs");
const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

describe("API reference at /docs and the decisions log (headless Chromium)", function () {
  let api: string;
  let browser: Browser;
  let page: Page;
  const requests: string[] = [];
  const problems: string[] = [];

  before(async function () {
    api = current().api.url;
    await mkdir(SHOTS, { recursive: true });
    browser = await chromium.launch({ executablePath: await ensureChromium(), headless: true, args: CHROMIUM_ARGS });
    page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    page.on("request", (request) => requests.push(request.url()));
    page.on("console", (message) => {
      if (message.type() === "error") problems.push(message.text());
    });
    page.on("pageerror", (error) => problems.push(error.message));
  });
  after(async () => browser?.close());

  it("serves /docs with a CSP allowing only its own origin", async function () {
    const response = await fetch(`${api}/docs`);
    const csp = response.headers.get("content-security-policy")!;
    expect(csp).to.include("default-src 'self'").and.include("script-src 'self'").and.include("style-src 'self'");
    expect(csp).to.not.match(/unsafe-inline|unsafe-eval|https?:/);
    const html = await response.text();
    expect(html).to.not.match(/<script>(?!<\/script>)|https?:\/\//); // no inline script, no absolute URL
  });

  it("renders the OpenAPI document: endpoints first, then every schema, with nothing fetched from elsewhere", async function () {
    await page.goto(`${api}/docs`);
    await page.waitForSelector(".opblock-tag-section", { timeout: 30_000 });
    const doc = (await (await fetch(`${api}/api/v1/openapi.json`)).json()) as any;
    // Every operation of the API and every outgoing webhook (OpenAPI 3.1 `webhooks`) is listed (under each of its tags).
    const ids = (items: Record<string, Record<string, any>> = {}) =>
      Object.values(items).flatMap(
        (ops) =>
          Object.values(ops)
            .map((op) => op?.operationId)
            .filter(Boolean) as string[],
      );
    const shown = await page.evaluate(() =>
      [...document.querySelectorAll(".opblock")].map((e) => e.id.split("-").slice(2).join("-")),
    );
    expect(new Set(shown)).to.deep.equal(new Set([...ids(doc.paths), ...ids(doc.webhooks)]));
    // Endpoints come before the schemas section.
    const order = await page.evaluate(() => {
      const first = document.querySelector(".opblock-tag-section")!;
      const models = document.querySelector("section.models")!;
      return first.compareDocumentPosition(models) & Node.DOCUMENT_POSITION_FOLLOWING;
    });
    expect(order).to.not.equal(0);
    // OpenAPI 3.1: each schema is a JSON Schema 2020-12 article titled with its name. From 100 schemas on, Swagger
    // UI virtualizes the list (only the rows in view exist): the names are gathered while scrolling through it.
    const schemaNames = await page.evaluate(async () => {
      const selector =
        "section.models article[data-json-schema-level='0'] > .json-schema-2020-12-head .json-schema-2020-12__title";
      const names = new Set<string>();
      const gather = () => document.querySelectorAll(selector).forEach((e) => names.add(e.textContent!.trim()));
      const models = document.querySelector("section.models")!;
      const scroller =
        [models, ...models.querySelectorAll("*")].find((e) => e.scrollHeight > e.clientHeight + 10) ?? null;
      gather();
      for (let at = 0; scroller && at <= scroller.scrollHeight; at += scroller.clientHeight / 2) {
        scroller.scrollTop = at;
        await new Promise((resolve) => setTimeout(resolve, 50));
        gather();
      }
      return [...names];
    });
    expect(new Set(schemaNames)).to.deep.equal(new Set(Object.keys(doc.components.schemas)));
    await page.screenshot({ path: path.join(SHOTS, "docs-overview.png") });
    for (const url of requests) expect(new URL(url).origin, url).to.equal(new URL(api).origin);
    expect(
      problems.filter((p) => /Content Security Policy|Refused/.test(p)),
      problems.join("\n"),
    ).to.deep.equal([]);
  });

  it("shows an operation's parameters, request schema and a generated example, with every $ref resolved", async function () {
    const op = page.locator("#operations-Requests-createRequest");
    await op.locator(".opblock-summary").click();
    await op.locator(".opblock-body").waitFor();
    const body = (await op.locator(".opblock-body").innerText()).replace(/\s+/g, " ");
    expect(body).to.include("Request body");
    expect(body).to.include("requestType");
    expect(body).to.include("Example Value");
    expect(body).to.not.include("$ref");
    // The example is real JSON, built from the resolved schema.
    const example = await op
      .locator(".body-param__example, .opblock-section-request-body .microlight")
      .first()
      .innerText();
    expect(JSON.parse(example)).to.have.property("requestType");
    await op.screenshot({ path: path.join(SHOTS, "docs-operation.png") });
    expect(
      problems.filter((p) => /Content Security Policy|Refused/.test(p)),
      problems.join("\n"),
    ).to.deep.equal([]);
  });

  it("renders the decisions log as HTML on a page of its own, not in the OpenAPI description", async function () {
    const doc = (await (await fetch(`${api}/api/v1/openapi.json`)).json()) as any;
    expect(doc.info.description).to.include("/docs/decisions");
    expect(doc.info.description).to.not.include("Rejection is a veto");
    const response = await fetch(`${api}/docs/decisions`);
    expect(response.headers.get("content-security-policy")).to.include("default-src 'self'");
    await page.goto(`${api}/docs/decisions`);
    expect(await page.locator("main h1").first().innerText()).to.match(/Decisions/);
    expect(await page.locator("main h2").count()).to.be.greaterThan(3);
    const text = await page.locator("main").innerText();
    expect(text).to.include("Rejection is a veto");
    expect(text).to.not.match(/^#+ /m); // headings rendered, not raw Markdown
    await page.screenshot({ path: path.join(SHOTS, "decisions.png") });
  });
});
