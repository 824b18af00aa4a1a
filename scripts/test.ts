/**
 * `npm test`: runs every suite, streams its output, and ends with the line CI counts:
 *   N passed, N failed[, N skipped]
 * Suites run one after another, each with the suites listed `alongside` it running at the same time (the machine
 * has cores the one runner leaves idle: the stack suite mostly waits on blocks and the indexer); each
 * runner's own summary is parsed (ANSI codes stripped) and a runner that exits non-zero without reporting a failure
 * counts as one failure, so a crash is never a green run.
 */
import { spawn } from "node:child_process";
import { ensureChromium } from "./ensureChromium.ts";

interface Suite {
  name: string;
  command: string[];
  /** Run at the same time, their output held back until they end so outputs never interleave. */
  alongside?: Suite[];
}

const suites: Suite[] = [
  { name: "compile", command: ["npx", "hardhat", "build", "--no-tests"] },
  {
    name: "typecheck",
    command: ["npx", "tsc", "--noEmit", "-p", "tsconfig.json"],
    alongside: [
      { name: "typecheck (indexer)", command: ["npx", "tsc", "--noEmit", "-p", "indexer/tsconfig.json"] },
      { name: "formatter", command: ["npm", "run", "--silent", "format:check"] },
      { name: "solidity lint", command: [process.execPath, "scripts/lintSolidity.ts"] },
    ],
  },
  {
    name: "unit (mocha)",
    command: ["npx", "mocha", "--config", "test/unit/mocharc.json"],
    alongside: [{ name: "openapi lint (mocha)", command: ["npx", "mocha", "--config", "test/openapi/mocharc.json"] }],
  },
  { name: "contracts (mocha)", command: ["npx", "hardhat", "test", "mocha", "--no-compile"] },
  {
    name: "stack (mocha)",
    command: ["npx", "mocha", "--config", "test/stack/mocharc.json"],
    alongside: [
      { name: "solidity", command: ["npx", "hardhat", "test", "solidity"] },
      { name: "auditor (mocha)", command: ["npx", "mocha", "--timeout", "180000", "--exit", "test/audit/*.test.ts"] },
    ],
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
  const beside = (suite.alongside ?? []).map((other) => ({ other, result: run(other, false) }));
  add(await run(suite));
  for (const { other, result } of beside) {
    const { output, ...counts } = await result;
    process.stdout.write(header(other) + output);
    add(counts);
  }
}
const skipped = total.skipped > 0 ? `, ${total.skipped} skipped` : "";
console.log(`\n${total.passed} passed, ${total.failed} failed${skipped}`);
process.exit(total.failed > 0 ? 1 : 0);
