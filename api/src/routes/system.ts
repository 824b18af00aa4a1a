/**
 * Operational endpoints at the root (outside /api/v1): /health, /metrics, and the API documentation
 * (/api/v1/openapi.json, /docs). /health is 200 only when Postgres and the chain answer and the indexer is
 * within HEALTH_MAX_INDEXER_LAG blocks of the chain head; otherwise 503 naming what is not ready.
 */
import type Router from "@koa/router";
import type { JsonRpcProvider } from "ethers";
import type pg from "pg";
import type { Metrics } from "../observability/metrics.ts";
import type { IndexProgress } from "../reads/indexProgress.ts";

export interface SystemDeps {
  pool: pg.Pool;
  provider: JsonRpcProvider;
  index: IndexProgress;
  metrics: Metrics;
  maxIndexerLag: number;
  openApiDocument: () => Record<string, unknown>;
}

interface Check {
  ok: boolean;
  [key: string]: unknown;
}

export async function healthReport(deps: SystemDeps) {
  const [database, chain, indexed] = await Promise.all([
    timed(async () => (await deps.pool.query("SELECT 1")).rowCount === 1),
    deps.provider.getBlockNumber().then((n) => n, () => undefined),
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
          : { ok: chain - indexed.block <= deps.maxIndexerLag, indexedBlock: indexed.block, lagBlocks: Math.max(0, chain - indexed.block) },
  };
  if (chain !== undefined && indexed !== undefined) deps.metrics.indexerLag.set(Math.max(0, chain - indexed.block));
  const ok = Object.values(checks).every((c) => c.ok);
  return { ok, body: { status: ok ? "ok" : "unavailable", checks, notReady: Object.keys(checks).filter((k) => !checks[k].ok) } };
}

export function mountSystemRoutes(router: Router, deps: SystemDeps): void {
  router.get("/health", async (ctx) => {
    const report = await healthReport(deps);
    ctx.status = report.ok ? 200 : 503;
    ctx.body = report.body;
  });

  router.get("/metrics", async (ctx) => {
    const counts = await deps.pool.query(`SELECT status, count(*)::int AS n FROM chain_transactions GROUP BY status`).catch(() => ({ rows: [] }));
    for (const status of ["PENDING", "CONFIRMED", "FAILED"]) {
      deps.metrics.outboxByStatus.set({ status }, counts.rows.find((r) => r.status === status)?.n ?? 0);
    }
    ctx.type = deps.metrics.registry.contentType;
    ctx.body = await deps.metrics.registry.metrics();
  });

  router.get("/api/v1/openapi.json", (ctx) => {
    ctx.body = deps.openApiDocument();
  });

  router.get("/docs", (ctx) => {
    ctx.type = "html";
    ctx.body = DOCS_PAGE;
  });
}

async function timed(probe: () => Promise<boolean>): Promise<{ ok: boolean; ms: number }> {
  const started = performance.now();
  try {
    return { ok: await probe(), ms: Math.round(performance.now() - started) };
  } catch {
    return { ok: false, ms: Math.round(performance.now() - started) };
  }
}

/** A self-contained reader for the OpenAPI document (no CDN: nothing is fetched from outside). */
const DOCS_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Licence Approval Service API</title>
<style>
body{font:15px/1.5 system-ui,sans-serif;margin:0;color:#1b1f24;background:#f6f8fa}
header{background:#0b3d91;color:#fff;padding:1rem 1.5rem}header h1{margin:0;font-size:1.3rem}
main{max-width:1000px;margin:0 auto;padding:1rem}
.op{background:#fff;border:1px solid #d0d7de;border-radius:6px;margin:.6rem 0}
.op summary{cursor:pointer;padding:.6rem .8rem;display:flex;gap:.8rem;align-items:baseline}
.m{font:600 12px monospace;padding:2px 8px;border-radius:4px;color:#fff;min-width:52px;text-align:center}
.get{background:#1f6feb}.post{background:#2da44e}.put{background:#bf8700}.patch{background:#8250df}.delete{background:#cf222e}
.path{font-family:monospace}.sum{color:#57606a}.body{padding:0 1rem 1rem}
pre{background:#f6f8fa;border:1px solid #d0d7de;padding:.6rem;overflow:auto;font-size:12px}
h2{margin-top:2rem;border-bottom:1px solid #d0d7de}.desc{white-space:pre-wrap}
</style></head><body><header><h1>Licence Approval Service API</h1><div id="ver"></div></header>
<main><p class="desc" id="intro"></p><div id="ops">Loading <a href="/api/v1/openapi.json">/api/v1/openapi.json</a>…</div></main>
<script>
fetch('/api/v1/openapi.json').then(r=>r.json()).then(doc=>{
  document.getElementById('ver').textContent='Version '+doc.info.version+' · OpenAPI '+doc.openapi;
  document.getElementById('intro').textContent=doc.info.description;
  const byTag={};
  for(const [path,ops] of Object.entries(doc.paths)) for(const [method,op] of Object.entries(ops)) (byTag[(op.tags||['other'])[0]] ??= []).push({path,method,op});
  const esc=s=>String(s).replace(/[&<>]/g,c=>({'&':'&amp;','<':'&lt;','>':'&gt;'}[c]));
  const root=document.getElementById('ops'); root.innerHTML='';
  for(const [tag,list] of Object.entries(byTag)){
    const h=document.createElement('h2'); h.textContent=tag; root.appendChild(h);
    for(const {path,method,op} of list){
      const d=document.createElement('details'); d.className='op';
      d.innerHTML='<summary><span class="m '+method+'">'+method.toUpperCase()+'</span><span class="path">'+esc(path)+'</span><span class="sum">'+esc(op.summary||'')+'</span></summary><div class="body"><p class="desc">'+esc(op.description||'')+'</p><pre>'+esc(JSON.stringify({security:op.security,parameters:op.parameters,requestBody:op.requestBody,responses:op.responses},null,2))+'</pre></div>';
      root.appendChild(d);
    }
  }
}).catch(e=>{document.getElementById('ops').textContent='Could not load the OpenAPI document: '+e});
</script></body></html>`;
