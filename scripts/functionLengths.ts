/**
 * Lists the longest functions (in lines) of api/src, scripts and indexer, measured with the TypeScript parser.
 *   node scripts/functionLengths.ts [--top N]
 * Left out: generated ABIs (abis/ folders) and route-table factories, whose bodies are declarative lists of
 * defineRoute(...) entries; the handlers inside those lists are functions of their own and are counted.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";

const ROOTS = ["api/src", "scripts", "indexer"];
const SKIPPED_FOLDERS = new Set(["node_modules", "abis", "generated", ".ponder"]);

export interface FunctionLength {
  name: string;
  file: string;
  startLine: number;
  lines: number;
}

function sourceFiles(folder: string): string[] {
  return readdirSync(folder).flatMap((entry) => {
    const path = join(folder, entry);
    if (statSync(path).isDirectory()) return SKIPPED_FOLDERS.has(entry) ? [] : sourceFiles(path);
    return /\.tsx?$/.test(entry) && !entry.endsWith(".d.ts") ? [path] : [];
  });
}

type FunctionNode = ts.FunctionLikeDeclaration;

function isFunction(node: ts.Node): node is FunctionNode {
  return (
    ts.isFunctionDeclaration(node) ||
    ts.isFunctionExpression(node) ||
    ts.isArrowFunction(node) ||
    ts.isMethodDeclaration(node) ||
    ts.isConstructorDeclaration(node) ||
    ts.isGetAccessor(node) ||
    ts.isSetAccessor(node)
  );
}

/** The name a reader would look for: the declaration's own, else the variable or property it is assigned to. */
function nameOf(node: FunctionNode, source: ts.SourceFile): string {
  if (node.name) return node.name.getText(source);
  if (ts.isConstructorDeclaration(node)) return "constructor";
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) return parent.name.getText(source);
  if (ts.isCallExpression(parent)) return `${parent.expression.getText(source).slice(0, 40)}(callback)`;
  return "(anonymous)";
}

/** A route-table factory calls defineRoute itself (not through a nested function). */
function isRouteTableFactory(node: FunctionNode): boolean {
  let found = false;
  const visit = (child: ts.Node): void => {
    if (found || isFunction(child)) return;
    if (ts.isCallExpression(child) && ts.isIdentifier(child.expression) && child.expression.text === "defineRoute") {
      found = true;
      return;
    }
    ts.forEachChild(child, visit);
  };
  if (node.body) ts.forEachChild(node.body, visit);
  return found;
}

export function functionLengthsOf(file: string, text: string): FunctionLength[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: FunctionLength[] = [];
  const visit = (node: ts.Node): void => {
    if (isFunction(node) && node.body && !isRouteTableFactory(node)) {
      const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line + 1;
      found.push({ name: nameOf(node, source), file, startLine: start, lines: end - start + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

export function longestFunctions(root: string, top: number): FunctionLength[] {
  return ROOTS.flatMap((folder) => sourceFiles(join(root, folder)))
    .flatMap((path) => functionLengthsOf(relative(root, path), readFileSync(path, "utf8")))
    .sort((a, b) => b.lines - a.lines || a.file.localeCompare(b.file))
    .slice(0, top);
}

if (import.meta.main) {
  const topFlag = process.argv.indexOf("--top");
  const top = topFlag >= 0 ? Number(process.argv[topFlag + 1]) : 10;
  console.log("| # | Lines | Function | Location |\n|---|---|---|---|");
  longestFunctions(process.cwd(), top).forEach((fn, i) => {
    console.log(`| ${i + 1} | ${fn.lines} | \`${fn.name}\` | \`${fn.file}:${fn.startLine}\` |`);
  });
}
