/**
 * The layering guard: reads the import graph of api/src, indexer/ and scripts/ and fails on every arrow that must
 * never exist, naming each offending import (file:line → specifier [resolved target] — rule). The parts and the
 * `never` arrows are read from docs/architecture-intent.json itself; the folder rules below add what the intent's
 * `says` lines promise (no Koa, no HTTP folder, no SQL strings in use cases, no HTTP-status errors in chain and
 * storage code). See docs/decisions.md,
 * "Layering guard".
 */
import { expect } from "chai";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import {
  type ArchitectureIntent,
  describeViolation,
  type Edge,
  factsOf,
  type ForbiddenImport,
  isKoa,
  neverRules,
  readFacts,
  sourceFiles,
  violations,
} from "./support/importGraph.ts";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const INTENT: ArchitectureIntent = JSON.parse(readFileSync(path.join(ROOT, "docs/architecture-intent.json"), "utf8"));
const SCANNED = ["api/src", "indexer", "scripts"];
const HTTP_FOLDER = "api/src/http/";
const STORAGE_FOLDER = "api/src/storage/";
// The error type with HTTP statuses that use cases and reads raise; chain and storage errors carry none.
const APP_ERROR_MODULE = "api/src/domain/errors.ts";
const KOA = { packages: isKoa, label: "koa" };
// Use cases take database handles as types from db/queryable.ts; the driver itself is the stores' and reads' business.
const PG = { packages: (specifier: string) => specifier === "pg" || specifier.startsWith("pg/"), label: "pg" };
// The Ethereum clients: a route that holds one reaches the chain without a use case (or the gateway) in between.
const CHAIN_CLIENTS = {
  packages: (specifier: string) => /^(?:ethers|viem)(?:\/|$)/.test(specifier),
  label: "ethers/viem",
};

/** What of the DomainContext holds or reaches keys and the chain: import graphs do not see a route using it. */
const CONTEXT_CHAIN = /\bcontext\.(?:gateway|departmentWallets|governance|applicantAddress)\b/;

const folders = (part: string) => {
  const found = INTENT.parts[part];
  if (!found) throw new Error(`docs/architecture-intent.json has no part ${part}`);
  return found.is;
};

/** The rules: the intent's `never` arrows, then the folder rules its parts' descriptions imply. */
function layeringRules(intent: ArchitectureIntent = INTENT): ForbiddenImport[] {
  const part = (name: string) => intent.parts[name]?.is ?? [];
  return [
    ...neverRules(intent),
    {
      from: part("Domain"),
      to: [KOA, { folder: HTTP_FOLDER }],
      rule: "Domain → Koa or api/src/http/: use cases know no HTTP",
    },
    {
      from: part("Domain"),
      to: [PG],
      rule: "Domain → pg: use cases hold no SQL; stores/ and reads/ speak to the database",
    },
    {
      from: part("Routes"),
      to: [PG, CHAIN_CLIENTS],
      rule: "Routes → pg, ethers or viem: routes hold no SQL and reach the chain only through use cases (or the gateway they are handed)",
    },
    {
      from: [...part("Reads"), ...part("Chain"), STORAGE_FOLDER],
      to: [KOA, { folder: HTTP_FOLDER }],
      rule: "Reads, Chain, storage → Koa or api/src/http/: only routes and the HTTP layer speak HTTP",
    },
    {
      from: [...part("Chain"), STORAGE_FOLDER],
      to: [{ folder: APP_ERROR_MODULE }],
      rule: "Chain, storage → api/src/domain/errors.ts: they throw errors of their own kinds, and http/errorKinds.ts gives the status",
    },
    { from: part("Indexer"), to: [{ folder: "api/" }], rule: "Indexer → api/: the indexer knows nothing of the API" },
  ];
}

const files = sourceFiles(ROOT, SCANNED);
const facts = readFacts(ROOT, files);

function offending(edges: Edge[], rules: ForbiddenImport[]): string[] {
  return violations(edges, rules).map(describeViolation);
}

/** Fails listing every finding, one a line (a diff of two arrays would print each twice). */
function expectNone(found: string[], what: string): void {
  if (found.length > 0) expect.fail(`${found.length} ${what}:\n  ${found.join("\n  ")}\n`);
}

describe("layering guard (docs/architecture-intent.json)", function () {
  it("reads a real graph: every part's folder exists and the tree has imports", function () {
    for (const [name, part] of Object.entries(INTENT.parts)) {
      for (const folder of part.is) expect(existsSync(path.join(ROOT, folder)), `${name}: ${folder}`).to.equal(true);
    }
    expect(files.length).to.be.greaterThan(100);
    expect(facts.edges.length).to.be.greaterThan(500);
  });

  for (const rule of layeringRules()) {
    it(`has no import ${rule.rule}`, function () {
      expectNone(offending(facts.edges, [rule]), "forbidden import(s)");
    });
  }

  it("has no route reaching the chain through the context object (its gateway, wallets or governance key)", function () {
    const found = files
      .filter((file) => folders("Routes").some((folder) => file.startsWith(folder)))
      .flatMap((file) =>
        readFileSync(path.join(ROOT, file), "utf8")
          .split("\n")
          .flatMap((line, i) => (CONTEXT_CHAIN.test(line) ? [`${file}:${i + 1} ${line.trim()}`] : [])),
      );
    expectNone(found, "route(s) reaching the chain through the context");
    expect(CONTEXT_CHAIN.test("body: await context.gateway.networkStatus()")).to.equal(true);
  });

  for (const part of ["Domain", "Routes"]) {
    it(`has no SQL strings in ${part} (${folders(part).join(", ")}): stores/ and reads/ hold them`, function () {
      const found = facts.sqlStrings
        .filter((s) => folders(part).some((folder) => s.file.startsWith(folder)))
        .map((s) => `${s.file}:${s.line} "${s.text}"`);
      expectNone(found, `SQL string(s) in ${folders(part).join(", ")}`);
    });
  }
});

describe("the layering guard itself, on a synthetic tree", function () {
  const synthetic = (sources: Record<string, string>) => {
    const all = Object.entries(sources).map(([file, text]) => factsOf(file, text));
    return { edges: all.flatMap((f) => f.edges), sqlStrings: all.flatMap((f) => f.sqlStrings) };
  };

  it("reports the one forbidden arrow, with the importing file, its line and the target", function () {
    const { edges } = synthetic({
      "api/src/domain/requests/createRequest.ts": [
        'import { readRequest } from "../../reads/requestReads.ts";',
        'import { gateway } from "../../chain/chainGateway.ts";',
        'import { requestRoutes } from "../../routes/requests.ts";',
      ].join("\n"),
      "api/src/routes/requests.ts": 'import { createRequest } from "../domain/requests/createRequest.ts";',
    });
    expect(offending(edges, layeringRules())).to.deep.equal([
      "api/src/domain/requests/createRequest.ts:3 → ../../routes/requests.ts [api/src/routes/requests.ts] — Domain → Routes: use cases know no HTTP",
    ]);
  });

  it("counts type-only imports, re-exports, dynamic import(), require() and import types", function () {
    const { edges } = synthetic({
      "api/src/domain/departments/departmentAuth.ts": 'import type { Context } from "koa";',
      "api/src/routes/admin.ts": 'export { gateway } from "../chain/chainGateway.ts";',
      "indexer/src/LicenceToken.ts": 'const m = await import("../../api/src/reads/stableId.ts");',
      "api/src/reads/requestReads.ts": 'const k = require("../chain/keyVault.ts");',
      "api/src/storage/multipartUpload.ts": 'let r: import("../http/routeTable.ts").Route;',
      "api/src/chain/remoteSigner.ts": 'import { AppError } from "../domain/errors.ts";',
      "api/src/routes/system.ts": 'import type { JsonRpcProvider } from "ethers";',
    });
    expect(offending(edges, layeringRules())).to.have.members([
      "api/src/routes/admin.ts:1 → ../chain/chainGateway.ts [api/src/chain/chainGateway.ts] — Routes → Chain: routes reach the chain only through use cases",
      "api/src/reads/requestReads.ts:1 → ../chain/keyVault.ts [api/src/chain/keyVault.ts] — Reads → Chain: reads never sign",
      "api/src/domain/departments/departmentAuth.ts:1 → koa [koa] (type only) — Domain → Koa or api/src/http/: use cases know no HTTP",
      "api/src/storage/multipartUpload.ts:1 → ../http/routeTable.ts [api/src/http/routeTable.ts] (type only) — Reads, Chain, storage → Koa or api/src/http/: only routes and the HTTP layer speak HTTP",
      "indexer/src/LicenceToken.ts:1 → ../../api/src/reads/stableId.ts [api/src/reads/stableId.ts] — Indexer → api/: the indexer knows nothing of the API",
      "api/src/chain/remoteSigner.ts:1 → ../domain/errors.ts [api/src/domain/errors.ts] — Chain, storage → api/src/domain/errors.ts: they throw errors of their own kinds, and http/errorKinds.ts gives the status",
      "api/src/routes/system.ts:1 → ethers [ethers] (type only) — Routes → pg, ethers or viem: routes hold no SQL and reach the chain only through use cases (or the gateway they are handed)",
    ]);
  });

  it("leaves allowed arrows, packages named like folders and look-alike folders alone", function () {
    const { edges } = synthetic({
      "api/src/domain/approvals/decide.ts": [
        'import { x } from "../../chain/chainGateway.ts";',
        'import { y } from "koalas";',
      ].join("\n"),
      "api/src/jobs/jobRunner.ts": 'import { z } from "../chain/nonceSequencer.ts";',
      "api/src/routes/system.ts": 'import { w } from "../chainStatus/status.ts";',
      "indexer/src/decode.ts": 'import { ApprovalRegistryAbi } from "../../abis/index.ts";',
      "api/src/chain/chainErrors.ts": 'import { x } from "../errorsOfOthers.ts";',
      "api/src/domain/requests/submitRequest.ts": 'import { AppError } from "../errors.ts";',
      "api/src/routes/verify.ts": 'import { x } from "ethers-decode-helper";',
      "api/src/domain/workflows/validateWorkflow.ts": 'import { s } from "../../routes/schemas/workflow.ts";',
    });
    expect(offending(edges, layeringRules())).to.deep.equal([]);
  });

  it("finds SQL statements in string and template literals, not English sentences", function () {
    const { sqlStrings } = synthetic({
      "api/src/domain/requests/createRequest.ts": [
        "const a = `SELECT id FROM requests WHERE id = ${1}`;",
        "const b = 'INSERT INTO audit_log (x) VALUES ($1)';",
        'const c = "  WITH latest AS (SELECT 1) SELECT * FROM latest";',
        "const d = `update requests set status = 'x'`;",
        'const e = "Update the document and submit again";',
        'const f = "Select a department";',
        'audit({ action: "UPDATE" });',
      ].join("\n"),
    });
    expect(sqlStrings.map((s) => s.line)).to.deep.equal([1, 2, 3, 4]);
  });
});
