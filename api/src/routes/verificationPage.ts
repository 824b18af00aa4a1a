/**
 * The verification page for people (GET /verify, with its script and stylesheet) and the home page linking to it.
 * Static files in api/public/verify/, read once at start-up; served with a strict Content-Security-Policy (no inline script, no
 * third-party origin: the page talks only to this server's public verification API).
 */
import { readFileSync } from "node:fs";
import type { RouteDefinition } from "../http/routeTable.ts";
import { staticPageRoute } from "./staticPage.ts";

const asset = (name: string) => readFileSync(new URL(`../../public/verify/${name}`, import.meta.url), "utf8");
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; media-src 'self' blob:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

const HOME = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Licence approval platform</title><link rel="stylesheet" href="/verify/app.css"></head>
<body><main><h1>Licence approval platform</h1>
<p class="lead">Licences and permits approved by several departments, with every decision recorded on a permissioned blockchain.</p>
<ul class="approvals">
<li><a href="/verify">Verify a licence or a document</a> (public, no account needed)</li>
<li><a href="/docs">API documentation</a> (<a href="/api/v1/openapi.json">OpenAPI 3.1</a>)</li>
<li><a href="/health">Service health</a></li>
</ul></main></body></html>`;

export function verificationPage(): RouteDefinition[] {
  const files = { html: asset("verify.html"), js: asset("verify.js"), css: asset("verify.css") };
  const page = (path: string, operationId: string, summary: string, body: string, contentType: string) =>
    staticPageRoute({ path, operationId, summary, body, contentType, csp: CSP });
  return [
    page("/", "homePage", "Home page", HOME, "text/html"),
    page(
      "/verify",
      "verificationPage",
      "The public verification page (token number, QR code, a document hashed in the browser, or a pasted credential)",
      files.html,
      "text/html",
    ),
    page("/verify/app.js", "verificationPageScript", "Script of the verification page", files.js, "text/javascript"),
    page(
      "/verify/app.css",
      "verificationPageStyle",
      "Stylesheet of the verification and home pages",
      files.css,
      "text/css",
    ),
  ];
}
