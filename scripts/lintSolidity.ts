/**
 * Solidity lint (solhint, `.solhint.json`; rule choices in docs/solhint.md) as a test suite of `npm test`: each
 * contract file is a test that passes with no error and no warning. Prints mocha-style counts for the runner.
 */
import { execFile } from "node:child_process";
import { readdir } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";

/** solhint's JSON format: one entry per problem (and a closing `{conclusion}` entry). */
interface Problem {
  filePath?: string;
  line: number;
  column: number;
  severity: string;
  message: string;
  ruleId: string;
}

const files = (await readdir("contracts", { recursive: true }))
  .filter((f) => f.endsWith(".sol"))
  .map((f) => path.join("contracts", f))
  .sort();
const solhint = path.join("node_modules", "solhint", "solhint.js");
const { stdout } = await promisify(execFile)(
  process.execPath,
  [solhint, "-c", ".solhint.json", "-f", "json", ...files],
  { maxBuffer: 16 * 1024 * 1024 },
).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? "[]" }));
const start = stdout.indexOf("[");
const problemsFound = (JSON.parse(stdout.slice(start, stdout.lastIndexOf("]") + 1) || "[]") as Problem[]).filter(
  (p) => p.filePath,
);
let failing = 0;
console.log("\n  solhint");
for (const file of files) {
  const problems = problemsFound.filter((p) => path.normalize(p.filePath!) === file);
  if (problems.length === 0) {
    console.log(`    ✔ ${file}`);
    continue;
  }
  failing++;
  console.log(`    ✖ ${file}`);
  for (const p of problems)
    console.log(`        ${p.line}:${p.column} ${p.severity.toLowerCase()} ${p.message} (${p.ruleId})`);
}
console.log(`\n  ${files.length - failing} passing`);
if (failing > 0) console.log(`  ${failing} failing`);
process.exit(failing > 0 ? 1 : 0);
