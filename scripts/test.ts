/**
 * `npm test`: runs every suite, streams its output, and ends with the line CI counts:
 *   N passed, N failed[, N skipped]
 * Suites run one after another; each runner's own summary is parsed (ANSI codes stripped) and a runner that
 * exits non-zero without reporting a failure counts as one failure, so a crash is never a green run.
 */
import { spawn } from "node:child_process";
import { ensureChromium } from "./ensureChromium.ts";

interface Suite {
  name: string;
  command: string[];
}

const suites: Suite[] = [
  // Compiling first writes the contracts' TypeScript types (types/, not committed) that the type-check reads:
  // on a clean clone there are none until this runs.
  { name: "compile", command: ["npx", "hardhat", "build"] },
  // The whole tree type-checks (API, scripts, tests, Ignition; the indexer against Ponder's types).
  { name: "typecheck", command: ["npx", "tsc", "--noEmit", "-p", "tsconfig.json"] },
  { name: "typecheck (indexer)", command: ["npx", "tsc", "--noEmit", "-p", "indexer/tsconfig.json"] },
  { name: "solidity lint", command: [process.execPath, "scripts/lintSolidity.ts"] },
  { name: "solidity", command: ["npx", "hardhat", "test", "solidity"] },
  { name: "contracts (mocha)", command: ["npx", "hardhat", "test", "mocha", "--no-compile"] },
  // Pure API modules, no stack (no database, chain or server).
  { name: "api units (mocha)", command: ["npx", "mocha", "--exit", "test/api/*.test.ts"] },
  // The auditor's tool on synthetic histories and on the compiled contracts on anvil (no API, no database).
  { name: "auditor (mocha)", command: ["npx", "mocha", "--timeout", "180000", "--exit", "test/audit/*.test.ts"] },
  // Redocly CLI on the OpenAPI document generated from the route table (offline; rules in redocly.yaml).
  { name: "openapi lint (mocha)", command: ["npx", "mocha", "--config", "test/openapi/mocharc.json"] },
  // The real stack (embedded Postgres, anvil, Ponder, API processes) on free ports; see test/stack/support.
  { name: "stack (mocha)", command: ["npx", "mocha", "--config", "test/stack/mocharc.json"] },
];

interface Counts {
  passed: number;
  failed: number;
  skipped: number;
}

function run(suite: Suite): Promise<Counts> {
  return new Promise((resolve) => {
    console.log(`\n=== ${suite.name}: ${suite.command.join(" ")}`);
    const child = spawn(suite.command[0], suite.command.slice(1), { stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    const forward = (stream: NodeJS.WriteStream) => (chunk: Buffer) => {
      output += chunk.toString();
      stream.write(chunk);
    };
    child.stdout.on("data", forward(process.stdout));
    child.stderr.on("data", forward(process.stderr));
    child.on("close", (code) => {
      const plain = output.replace(/\x1b\[[0-9;]*m/g, "");
      const count = (re: RegExp) => [...plain.matchAll(re)].reduce((sum, m) => sum + Number(m[1]), 0);
      const counts = {
        passed: count(/^\s*(\d+) passing/gm),
        failed: count(/^\s*(\d+) failing/gm),
        skipped: count(/^\s*(\d+) (?:pending|skipped)/gm),
      };
      if (code !== 0 && counts.failed === 0) counts.failed = 1;
      resolve(counts);
    });
  });
}

// The browser tests (in the stack suite) need Chromium: install it, if missing, while the first suites run.
const chromium = ensureChromium((line) => console.log(`(${line})`)).then(
  () => undefined,
  (error: Error) => console.error(`(browser tests will fail: ${error.message})`),
);

const total: Counts = { passed: 0, failed: 0, skipped: 0 };
for (const suite of suites) {
  if (suite.name.startsWith("stack")) await chromium;
  const counts = await run(suite);
  total.passed += counts.passed;
  total.failed += counts.failed;
  total.skipped += counts.skipped;
}
const skipped = total.skipped > 0 ? `, ${total.skipped} skipped` : "";
console.log(`\n${total.passed} passed, ${total.failed} failed${skipped}`);
process.exit(total.failed > 0 ? 1 : 0);
