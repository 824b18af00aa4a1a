/**
 * `npm test` lints the API's OpenAPI document with Redocly CLI: the document generated from the route
 * table without a service, by the function that serves /api/v1/openapi.json (test/stack/documentedStatuses.test.ts
 * checks that the served one is the same). Clean means no error and no warning under redocly.yaml, which names and
 * justifies every rule it turns off. The linter runs offline: a preload records any network connection it tries.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "chai";
import { loadConfig } from "../../api/src/config.ts";
import { generateOpenApiDocument } from "../../api/src/http/openApiDocument.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const CLI = path.join(ROOT, "node_modules/@redocly/cli/bin/cli.js");
const CONFIG = path.join(ROOT, "redocly.yaml");
const BLOCKER = fileURLToPath(new URL("./support/blockNetwork.cjs", import.meta.url));

interface LintReport {
  totals: { errors: number; warnings: number; ignored: number };
  problems: { ruleId: string; severity: string; message: string; location: { pointer?: string }[] }[];
}

type Json = Record<string, any>;

describe("OpenAPI document: Redocly CLI lint", function () {
  let dir: string;
  let document: Json;
  let report: LintReport;
  let attemptsFile: string;

  /** Node (this process's: Node 24) with the network blocker preloaded; telemetry and update checks off. */
  function runOffline(args: string[], attempts: string): Promise<{ code: number; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
      execFile(
        process.execPath,
        args,
        {
          cwd: dir,
          maxBuffer: 32 * 1024 * 1024,
          env: {
            ...process.env,
            REDOCLY_TELEMETRY: "off",
            REDOCLY_SUPPRESS_UPDATE_NOTICE: "true",
            NODE_OPTIONS: `--require ${BLOCKER}`,
            NETWORK_ATTEMPTS_FILE: attempts,
          },
        },
        (error, stdout, stderr) =>
          resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
    });
  }

  async function lint(doc: Json, name: string): Promise<LintReport> {
    const file = path.join(dir, `${name}.json`);
    await writeFile(file, JSON.stringify(doc, null, 2));
    const run = await runOffline([CLI, "lint", file, "--config", CONFIG, "--format=json"], attemptsFile);
    try {
      return JSON.parse(run.stdout) as LintReport;
    } catch {
      throw new Error(`redocly lint gave no JSON report (exit ${run.code}): ${run.stderr.slice(0, 2000)}`);
    }
  }

  before(async function () {
    dir = await mkdtemp(path.join(os.tmpdir(), "openapi-lint-"));
    attemptsFile = path.join(dir, "network-attempts.log");
    await writeFile(attemptsFile, "");
    const decisions = await readFile(path.join(ROOT, "docs/decisions.md"), "utf8");
    const config = loadConfig({ NODE_ENV: "test", DATA_DIR: dir, PUBLIC_BASE_URL: "http://127.0.0.1:3000" });
    document = generateOpenApiDocument(config, decisions);
    report = await lint(document, "openapi");
  });

  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("reports no error and no warning on the generated document", function () {
    const problems = report.problems.map(
      (p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location.map((l) => l.pointer).join(", ")}`,
    );
    expect(problems).to.deep.equal([]);
    expect(report.totals).to.deep.equal({ errors: 0, warnings: 0, ignored: 0 });
  });

  it("ran offline: the linter opened no network connection and looked up no host", async function () {
    expect((await readFile(attemptsFile, "utf8")).trim()).to.equal("");
  });

  it("the offline check would notice a connection (the preload records and refuses one)", async function () {
    const attempts = path.join(dir, "probe-attempts.log");
    await writeFile(attempts, "");
    await runOffline(["-e", "require('node:net').connect(443, '192.0.2.1').on('error', () => {})"], attempts);
    expect(await readFile(attempts, "utf8")).to.equal("connect 192.0.2.1:443\n");
  });

  it("fails a document that breaks the rules the issue named (the lint is not a no-op)", async function () {
    const broken = structuredClone(document);
    delete broken.info.license;
    const hook = Object.values(broken.webhooks as Json)[0] as Json;
    delete hook.post.security;
    const authorize = broken.paths["/api/v1/auth/identitylocker/authorize"].get;
    authorize.responses = { 400: authorize.responses["400"] };
    const jwks = broken.paths["/.well-known/jwks.json"].get;
    jwks.responses = { 200: jwks.responses["200"] };
    const found = new Set((await lint(broken, "broken")).problems.map((p) => p.ruleId));
    expect([...found]).to.include.members([
      "info-license",
      "security-defined",
      "rule/success-or-redirect-response",
      "operation-4xx-response",
    ]);
  });

  it("redocly.yaml gives a reason (a comment just above) for every rule it turns off", async function () {
    const lines = (await readFile(CONFIG, "utf8")).split("\n");
    const unexplained = lines.flatMap((line, i) =>
      /^\s+[\w/-]+:\s*off\b/.test(line) && !/^\s*#/.test(lines[i - 1] ?? "") ? [line.trim()] : [],
    );
    expect(unexplained).to.deep.equal([]);
  });
});
