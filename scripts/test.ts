/**
 * `npm test`: runs every suite, streams its output, and ends with the line CI counts:
 *   N passed, N failed[, N skipped]
 * Suites run one after another, except the Solidity tests, which compile and run beside the stack suite; each
 * runner's own summary is parsed (ANSI codes stripped) and a runner that exits non-zero without reporting a failure
 * counts as one failure, so a crash is never a green run.
 */
import { spawn } from "node:child_process";
import { ensureChromium } from "./ensureChromium.ts";

interface Suite {
  name: string;
  command: string[];
  /** Runs at the same time, its output held back until it ends so the two never interleave. */
  alongside?: Suite;
}

const suites: Suite[] = [
  // Compiling first writes the contracts' TypeScript types (types/, not committed) that the type-check reads:
  // on a clean clone there are none until this runs. The Solidity tests compile later (see the stack suite).
  { name: "compile", command: ["npx", "hardhat", "build", "--no-tests"] },
  // The whole tree type-checks (API, scripts, tests, Ignition; the indexer against Ponder's types).
  { name: "typecheck", command: ["npx", "tsc", "--noEmit", "-p", "tsconfig.json"] },
  { name: "typecheck (indexer)", command: ["npx", "tsc", "--noEmit", "-p", "indexer/tsconfig.json"] },
  // Pure modules and the layering guard: no stack, no database, no chain; the whole suite runs in about a second.
  { name: "unit (mocha)", command: ["npx", "mocha", "--config", "test/unit/mocharc.json"] },
  // One formatter for the TypeScript tree (.prettierrc.json, .prettierignore): `npm run format` fixes what this finds.
  { name: "formatter", command: ["npm", "run", "--silent", "format:check"] },
  { name: "solidity lint", command: [process.execPath, "scripts/lintSolidity.ts"] },
  { name: "contracts (mocha)", command: ["npx", "hardhat", "test", "mocha", "--no-compile"] },
  // The auditor's tool on synthetic histories and on the compiled contracts on anvil (no API, no database).
  { name: "auditor (mocha)", command: ["npx", "mocha", "--timeout", "180000", "--exit", "test/audit/*.test.ts"] },
  // Redocly CLI on the OpenAPI document generated from the route table (offline; rules in redocly.yaml).
  { name: "openapi lint (mocha)", command: ["npx", "mocha", "--config", "test/openapi/mocharc.json"] },
  // The real stack (embedded Postgres, anvil, Ponder, API processes) on free ports; see test/stack/support.
  // It spends much of its time waiting on the chain, the indexer and timers, so the Solidity tests (minutes of one
  // core compiling them through the IR pipeline, then fuzz and invariant campaigns) use the other core meanwhile.
  {
    name: "stack (mocha)",
    command: ["npx", "mocha", "--config", "test/stack/mocharc.json"],
    alongside: { name: "solidity", command: ["npx", "hardhat", "test", "solidity"] },
  },
];

interface Counts {
  passed: number;
  failed: number;
  skipped: number;
}

const header = (suite: Suite) => `\n=== ${suite.name}: ${suite.command.join(" ")}\n`;

function run(suite: Suite, echo = true): Promise<Counts & { output: string }> {
  return new Promise((resolve) => {
    if (echo) process.stdout.write(header(suite));
    const child = spawn(suite.command[0], suite.command.slice(1), { stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    const forward = (stream: NodeJS.WriteStream) => (chunk: Buffer) => {
      output += chunk.toString();
      if (echo) stream.write(chunk);
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
      resolve({ ...counts, output });
    });
  });
}

// The browser tests (in the stack suite) need Chromium: install it, if missing, while the first suites run.
const chromium = ensureChromium((line) => console.log(`(${line})`)).then(
  () => undefined,
  (error: Error) => console.error(`(browser tests will fail: ${error.message})`),
);

const total: Counts = { passed: 0, failed: 0, skipped: 0 };
const add = (counts: Counts) => {
  total.passed += counts.passed;
  total.failed += counts.failed;
  total.skipped += counts.skipped;
};
for (const suite of suites) {
  if (suite.name.startsWith("stack")) await chromium;
  const beside = suite.alongside && run(suite.alongside, false);
  add(await run(suite));
  if (suite.alongside && beside) {
    const result = await beside;
    process.stdout.write(header(suite.alongside) + result.output);
    add(result);
  }
}
const skipped = total.skipped > 0 ? `, ${total.skipped} skipped` : "";
console.log(`\n${total.passed} passed, ${total.failed} failed${skipped}`);
process.exit(total.failed > 0 ? 1 : 0);
