/**
 * Operational endpoints at the root (outside /api/v1): /health, /metrics, and the API documentation
 * (/api/v1/openapi.json, /docs, /docs/decisions). /health is 200 only when Postgres and the chain answer and the indexer is
 * within 5 blocks of the chain head; otherwise 503 naming what is not ready.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import type Router from "@koa/router";
import type Koa from "koa";
import { marked } from "marked";
import { databaseAnswers } from "../db/pool.ts";
import type { DbPool } from "../db/queryable.ts";
import { AppError } from "../domain/errors.ts";
import type { Metrics } from "../observability/metrics.ts";
import type { IndexProgress } from "../reads/indexProgress.ts";
import { outboxCountsByStatus, TX_STATUSES } from "../reads/outboxReads.ts";

/** The chain's head, as the gateway reads it (routes do not reach the chain themselves). */
export interface ChainHead {
  blockNumber(): Promise<number>;
}

export interface SystemDeps {
  pool: DbPool;
  gateway: ChainHead;
  index: IndexProgress;
  metrics: Metrics;
  maxIndexerLag: number;
  openApiDocument: () => Record<string, unknown>;
  /** METRICS_TOKEN: when set, /metrics answers only `Authorization: Bearer <token>` (a scraper's credential). */
  metricsToken?: string;
}

interface Check {
  ok: boolean;
  [key: string]: unknown;
}

export async function healthReport(deps: SystemDeps) {
  const [database, chain, indexed] = await Promise.all([
    timed(() => databaseAnswers(deps.pool)),
    deps.gateway.blockNumber().then(
      (n) => n,
      () => undefined,
    ),
    deps.index.status(),
  ]);
  const checks: Record<string, Check> = {
    database: { ok: database.ok, latencyMs: database.ms },
    chain: chain === undefined ? { ok: false, error: "chain RPC not answering" } : { ok: true, blockNumber: chain },
    indexer:
      indexed === undefined
        ? { ok: false, error: "indexer not answering" }
        : chain === undefined
          ? { ok: false, indexedBlock: indexed.block, error: "chain head unknown" }
          : {
              ok: chain - indexed.block <= deps.maxIndexerLag,
              indexedBlock: indexed.block,
              lagBlocks: Math.max(0, chain - indexed.block),
            },
  };
  if (chain !== undefined && indexed !== undefined) deps.metrics.indexerLag.set(Math.max(0, chain - indexed.block));
  const ok = Object.values(checks).every((c) => c.ok);
  return {
    ok,
    body: { status: ok ? "ok" : "unavailable", checks, notReady: Object.keys(checks).filter((k) => !checks[k].ok) },
  };
}

export function mountSystemRoutes(router: Router, deps: SystemDeps): void {
  router.get("/health", async (ctx) => {
    const report = await healthReport(deps);
    ctx.status = report.ok ? 200 : 503;
    ctx.body = report.body;
  });

  router.get("/metrics", async (ctx) => {
    if (deps.metricsToken && !bearerMatches(ctx.get("authorization"), deps.metricsToken))
      throw new AppError(401, "UNAUTHORIZED", "/metrics needs the METRICS_TOKEN bearer token", undefined, {
        "WWW-Authenticate": 'Bearer realm="metrics"',
      });
    // Without the database the counts read 0; the other metrics are still answered.
    const counts = await outboxCountsByStatus(deps.pool).catch(() => undefined);
    for (const status of TX_STATUSES) deps.metrics.outboxByStatus.set({ status }, counts?.[status] ?? 0);
    ctx.type = deps.metrics.registry.contentType;
    ctx.body = await deps.metrics.registry.metrics();
  });

  router.get("/api/v1/openapi.json", (ctx) => {
    ctx.body = deps.openApiDocument();
  });

  mountDocsRoutes(router);
}

/** Whether an Authorization header carries exactly this bearer token (compared in constant time). */
function bearerMatches(authorization: string, token: string): boolean {
  const given = /^Bearer\s+(\S+)$/i.exec(authorization)?.[1] ?? "";
  const digest = (text: string) => createHash("sha256").update(text).digest();
  return timingSafeEqual(digest(given), digest(token));
}

async function timed(probe: () => Promise<boolean>): Promise<{ ok: boolean; ms: number }> {
  const started = performance.now();
  try {
    return { ok: await probe(), ms: Math.round(performance.now() - started) };
  } catch {
    return { ok: false, ms: Math.round(performance.now() - started) };
  }
}

/**
 * The API reference at /docs: Swagger UI (npm swagger-ui-dist, served from node_modules: nothing from a CDN) on the
 * OpenAPI document, endpoints first, then every schema; and docs/decisions.md rendered to HTML (npm marked) at
 * /docs/decisions. Both pages load only their own origin's resources, which their Content-Security-Policy enforces.
 */
const DOCS_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  // Swagger UI's stylesheet draws its icons as data: SVGs; nothing is fetched from elsewhere.
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

const swaggerDir = path.dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));
/** The only files of the renderer that are served, by the name they have under /docs/assets/. */
const SWAGGER_FILES: Record<string, string> = {
  "swagger-ui-bundle.js": "application/javascript; charset=utf-8",
  "swagger-ui.css": "text/css; charset=utf-8",
  "favicon-32x32.png": "image/png",
};

function mountDocsRoutes(router: Router): void {
  const page = (ctx: Koa.Context, html: string) => {
    ctx.set("content-security-policy", DOCS_CSP);
    ctx.set("x-content-type-options", "nosniff");
    ctx.type = "html";
    ctx.body = html;
  };
  router.get("/docs", (ctx) => page(ctx, DOCS_PAGE));
  router.get("/docs/decisions", async (ctx) => page(ctx, await decisionsPage()));
  router.get("/docs/assets/:file", async (ctx) => {
    const file = ctx.params.file;
    ctx.set("x-content-type-options", "nosniff");
    ctx.set("cache-control", "public, max-age=3600");
    if (file === "docs.js" || file === "docs.css") {
      ctx.type = file.endsWith(".js") ? "application/javascript; charset=utf-8" : "text/css; charset=utf-8";
      ctx.body = file === "docs.js" ? DOCS_SCRIPT : DOCS_STYLE;
      return;
    }
    const type = SWAGGER_FILES[file];
    if (!type) {
      ctx.status = 404;
      ctx.body = { code: "NOT_FOUND", message: "No such documentation asset" };
      return;
    }
    ctx.type = type;
    ctx.body = await readFile(path.join(swaggerDir, file));
  });
}

let decisionsHtml: Promise<string> | undefined;
/** docs/decisions.md as HTML, rendered once per process. */
function decisionsPage(): Promise<string> {
  decisionsHtml ??= readFile(new URL("../../../docs/decisions.md", import.meta.url), "utf8")
    .then((markdown) => marked.parse(markdown, { async: false }) as string)
    .catch(() => "<p>docs/decisions.md is not available on this server.</p>")
    .then(
      (body) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Decisions · Licence Approval Service</title><link rel="stylesheet" href="/docs/assets/docs.css"></head>
<body class="decisions"><header class="bar"><a href="/docs">API reference</a><span>Decisions</span><a href="/api/v1/openapi.json">OpenAPI JSON</a></header>
<main class="prose">${body}</main></body></html>`,
    );
  return decisionsHtml;
}

const DOCS_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>API reference · Licence Approval Service</title>
<link rel="icon" href="/docs/assets/favicon-32x32.png">
<link rel="stylesheet" href="/docs/assets/swagger-ui.css"><link rel="stylesheet" href="/docs/assets/docs.css"></head>
<body><header class="bar"><span>API reference</span><a href="/docs/decisions">Decisions</a><a href="/api/v1/openapi.json">OpenAPI JSON</a><a href="/verify">Verify a licence</a></header>
<div id="swagger-ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script><script src="/docs/assets/docs.js"></script></body></html>`;

/** Swagger UI's settings: operations listed (collapsed) first, schemas below, examples generated from the schemas. */
const DOCS_SCRIPT = `window.ui = SwaggerUIBundle({
  url: "/api/v1/openapi.json",
  dom_id: "#swagger-ui",
  presets: [SwaggerUIBundle.presets.apis],
  layout: "BaseLayout",
  deepLinking: true,
  docExpansion: "list",
  defaultModelsExpandDepth: 1,
  defaultModelExpandDepth: 2,
  defaultModelRendering: "example",
  displayRequestDuration: true,
  tryItOutEnabled: false,
  validatorUrl: null,
});
`;

const DOCS_STYLE = `
.bar{display:flex;gap:1.2rem;align-items:center;background:#0b3d91;color:#fff;padding:.7rem 1.5rem;font:600 15px system-ui,sans-serif}
.bar a{color:#dbe7ff;text-decoration:none;font-weight:500}.bar a:hover{text-decoration:underline}
.decisions{margin:0;background:#f6f8fa;color:#1b1f24}
.prose{max-width:860px;margin:0 auto;padding:1rem 1.5rem 3rem;font:16px/1.6 system-ui,sans-serif;background:#fff}
.prose h1{font-size:1.8rem;border-bottom:1px solid #d0d7de;padding-bottom:.3rem}.prose h2{margin-top:2rem;border-bottom:1px solid #d0d7de}
.prose code{background:#eff1f3;padding:.1rem .3rem;border-radius:4px;font-size:.9em}
.prose pre{background:#f6f8fa;border:1px solid #d0d7de;padding:.8rem;overflow:auto}
.prose table{border-collapse:collapse}.prose th,.prose td{border:1px solid #d0d7de;padding:.3rem .6rem}
`;
