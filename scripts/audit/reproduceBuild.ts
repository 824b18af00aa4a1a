/**
 * `node scripts/audit/reproduceBuild.ts [abis/build.json]`: compiles the repository's sources again with solc-js (no
 * Hardhat), with the reviewed build's compiler and settings, and checks the result is that build byte for byte, so
 * the code deployments are held to follows from the sources a reviewer reads. Exit 0 reproduced, 1 differs, 2 error.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import {
  OUTPUT_SELECTION,
  REVIEWED_BUILD_FILE,
  readReviewedBuild,
  reviewedBuildJson,
  reviewedContract,
  type ReviewedBuild,
  type SolcOutput,
} from "./reviewedBuild.ts";

const require = createRequire(import.meta.url);
const REPO_ROOT = path.resolve(import.meta.dirname, "../..");

interface Solc {
  version(): string;
  compile(input: string, callbacks: { import: (name: string) => { contents: string } | { error: string } }): string;
}

/** The file a source name stands for, or an error naming what is missing. */
export function sourceFile(sourceName: string): string {
  if (sourceName.startsWith("project/")) return path.join(REPO_ROOT, sourceName.slice("project/".length));
  const npm = /^npm\/((?:@[^/]+\/)?[^/@]+)@([^/]+)\/(.+)$/.exec(sourceName);
  if (!npm) throw new Error(`${sourceName}: neither a project file nor an npm package's`);
  const [, pkg, version, file] = npm;
  const installed = JSON.parse(readFileSync(path.join(REPO_ROOT, "node_modules", pkg, "package.json"), "utf8")).version;
  if (installed !== version) throw new Error(`${sourceName}: node_modules has ${pkg}@${installed}, not ${version}`);
  return path.join(REPO_ROOT, "node_modules", pkg, file);
}

/** A source's text from this repository (or its node_modules). */
export const repositorySource = (sourceName: string) => readFileSync(sourceFile(sourceName), "utf8");

/**
 * The contracts `shipped` lists, compiled afresh with its compiler and settings, each from its own source file and
 * what it imports, the text of each source given by `read` (by default this repository's files).
 */
export function compileReviewedBuild(
  shipped: ReviewedBuild,
  read: (sourceName: string) => string = repositorySource,
): ReviewedBuild {
  const solc: Solc = require("solc");
  // "0.8.34+commit.80d5c536.Emscripten.clang": the platform suffix is not part of the compiler's identity.
  const version = /^[^+]+\+commit\.[0-9a-f]+/.exec(solc.version())?.[0];
  if (version !== shipped.compiler.version)
    throw new Error(
      `the npm solc package is ${solc.version()}, the reviewed build was made by ${shipped.compiler.version}`,
    );
  const contracts: ReviewedBuild["contracts"] = {};
  for (const [name, { sourceName }] of Object.entries(shipped.contracts)) {
    const input = {
      language: "Solidity",
      sources: { [sourceName]: { content: read(sourceName) } },
      settings: {
        ...shipped.compiler.settings,
        outputSelection: { [sourceName]: { [name]: OUTPUT_SELECTION }, "*": { "": ["ast"] } },
      },
    };
    const result = JSON.parse(
      solc.compile(JSON.stringify(input), {
        import: (source) => {
          try {
            return { contents: read(source) };
          } catch (error) {
            return { error: (error as Error).message };
          }
        },
      }),
    ) as SolcOutput & { errors?: { severity: string; formattedMessage: string }[] };
    const errors = (result.errors ?? []).filter((e) => e.severity === "error");
    if (errors.length)
      throw new Error(`${name} does not compile:\n${errors.map((e) => e.formattedMessage).join("\n")}`);
    contracts[name] = reviewedContract(name, sourceName, result, read);
  }
  return { compiler: shipped.compiler, contracts };
}

/** What differs between two builds, contract by contract: sources added, removed or changed, and code. */
export function buildDifferences(shipped: ReviewedBuild, fresh: ReviewedBuild): string[] {
  const differences: string[] = [];
  if (JSON.stringify(shipped.compiler) !== JSON.stringify(fresh.compiler)) differences.push("compiler or settings");
  for (const name of new Set([...Object.keys(shipped.contracts), ...Object.keys(fresh.contracts)])) {
    const [a, b] = [shipped.contracts[name], fresh.contracts[name]];
    if (!a || !b) {
      differences.push(`${name}: only in the ${a ? "shipped" : "fresh"} build`);
      continue;
    }
    for (const source of new Set([...Object.keys(a.sources), ...Object.keys(b.sources)]))
      if (a.sources[source] !== b.sources[source])
        differences.push(
          `${name}: source ${source} ${!a.sources[source] ? "added" : !b.sources[source] ? "removed" : "changed"}`,
        );
    for (const field of Object.keys(a) as (keyof typeof a)[])
      if (field !== "sources" && JSON.stringify(a[field]) !== JSON.stringify(b[field]))
        differences.push(`${name}: ${field}`);
  }
  return differences;
}

/** Where two texts first differ, as "line N", or undefined when they are equal. */
export function firstDifferentLine(a: string, b: string): number | undefined {
  if (a === b) return undefined;
  const [left, right] = [a.split("\n"), b.split("\n")];
  let line = 0;
  while (left[line] === right[line]) line++;
  return line + 1;
}

if (import.meta.main) {
  const file = process.argv[2] ?? REVIEWED_BUILD_FILE;
  try {
    const shipped = await readReviewedBuild(file);
    const fresh = compileReviewedBuild(shipped);
    const line = firstDifferentLine(readFileSync(file, "utf8"), reviewedBuildJson(fresh));
    if (line === undefined) console.log(`Reproduced ${file} byte for byte from the repository's sources`);
    else
      console.log(
        `NOT reproduced: ${file} and a fresh compile differ from line ${line}:\n${buildDifferences(shipped, fresh)
          .map((d) => `  ${d}`)
          .join("\n")}`,
      );
    process.exitCode = line === undefined ? 0 : 1;
  } catch (error) {
    console.error(`cannot reproduce the reviewed build: ${(error as Error).message}`);
    process.exitCode = 2;
  }
}
