/**
 * The import graph of the TypeScript tree, and the arrows of it that the intended layering forbids
 * (docs/architecture-intent.json, plus the folder rules of docs/decisions.md, "Layering guard").
 *
 * Every import counts, `import type` included: a type import still makes a module speak another layer's language
 * (a use case typed against Koa's `Context` knows HTTP even if no Koa code runs), and today's type import is
 * tomorrow's value import. Counted: static imports and re-exports, `import x = require()`, dynamic `import()`,
 * `require()` calls and `import("…")` types. Relative specifiers resolve to repository paths (by path alone, so a
 * synthetic graph needs no files); bare specifiers stay package names.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript";

export interface Edge {
  /** The importing file, relative to the repository root, with "/" separators. */
  from: string;
  /** A repository path (relative specifiers) or a package specifier (bare ones, e.g. "koa", "@koa/router"). */
  to: string;
  /** The specifier as written. */
  specifier: string;
  line: number;
  typeOnly: boolean;
}

export interface SqlString {
  file: string;
  line: number;
  text: string;
}

export interface SourceFacts {
  edges: Edge[];
  sqlStrings: SqlString[];
}

// Uppercase statement keywords as the code writes SQL, or unmistakable lowercase statement shapes.
const SQL_START =
  /^\s*\(?\s*(?:(?:SELECT|INSERT|UPDATE|DELETE|WITH)\s|insert\s+into\b|delete\s+from\b|update\s+[\w."]+\s+set\b|select\s[\s\S]*\bfrom\b)/;

/** The imports and SQL-looking strings of one source text. `file` is its repository path. */
export function factsOf(file: string, text: string): SourceFacts {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, scriptKind(file));
  const edges: Edge[] = [];
  const sqlStrings: SqlString[] = [];
  const lineOf = (node: ts.Node) => source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
  const addEdge = (specifierNode: ts.Node | undefined, typeOnly: boolean) => {
    if (!specifierNode || !ts.isStringLiteralLike(specifierNode)) return;
    const specifier = specifierNode.text;
    edges.push({ from: file, to: resolveSpecifier(file, specifier), specifier, line: lineOf(specifierNode), typeOnly });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) {
      addEdge(node.moduleSpecifier, node.importClause?.isTypeOnly ?? false);
    } else if (ts.isExportDeclaration(node)) {
      addEdge(node.moduleSpecifier, node.isTypeOnly);
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      addEdge(node.moduleReference.expression, node.isTypeOnly);
    } else if (ts.isCallExpression(node)) {
      const isImport = node.expression.kind === ts.SyntaxKind.ImportKeyword;
      const isRequire = ts.isIdentifier(node.expression) && node.expression.text === "require";
      if (isImport || isRequire) addEdge(node.arguments[0], false);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      addEdge(node.argument.literal, true);
    } else if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateHead(node)) {
      const inImport = node.parent && (ts.isImportDeclaration(node.parent) || ts.isExportDeclaration(node.parent));
      if (!inImport && SQL_START.test(node.text)) {
        sqlStrings.push({ file, line: lineOf(node), text: node.text.trim().split("\n")[0].slice(0, 80) });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return { edges, sqlStrings };
}

function scriptKind(file: string): ts.ScriptKind {
  return /\.[mc]?js$/.test(file) ? ts.ScriptKind.JS : ts.ScriptKind.TS;
}

/** A relative specifier as a normalized repository path; a bare one unchanged. */
export function resolveSpecifier(from: string, specifier: string): string {
  if (!specifier.startsWith(".") && !specifier.startsWith("/")) return specifier;
  return path.posix.normalize(path.posix.join(path.posix.dirname(from), specifier));
}

const SOURCE = /\.(?:[mc]?ts|[mc]?js)$/;
const SKIPPED_DIRECTORIES = new Set(["node_modules", "generated"]);

/** Every source file under `roots` (repository-relative), skipping dependencies, generated and hidden folders. */
export function sourceFiles(repositoryRoot: string, roots: string[]): string[] {
  const files: string[] = [];
  const walk = (relative: string) => {
    for (const entry of readdirSync(path.join(repositoryRoot, relative), { withFileTypes: true })) {
      const child = `${relative}/${entry.name}`;
      if (entry.isDirectory()) {
        if (!entry.name.startsWith(".") && !SKIPPED_DIRECTORIES.has(entry.name)) walk(child);
      } else if (SOURCE.test(entry.name) && !entry.name.endsWith(".d.ts")) {
        files.push(child);
      }
    }
  };
  for (const root of roots) walk(root.replace(/\/$/, ""));
  return files.sort();
}

export function readFacts(repositoryRoot: string, files: string[]): SourceFacts {
  const all: SourceFacts = { edges: [], sqlStrings: [] };
  for (const file of files) {
    const facts = factsOf(file, readFileSync(path.join(repositoryRoot, file), "utf8"));
    all.edges.push(...facts.edges);
    all.sqlStrings.push(...facts.sqlStrings);
  }
  return all;
}

// ---------------------------------------------------------------------------------------------------------------
// Rules
// ---------------------------------------------------------------------------------------------------------------

/** docs/architecture-intent.json: the parts (folders) and the arrows that must never exist. */
export interface ArchitectureIntent {
  /** `shared`: folders inside a part that the other parts may import all the same (pure data, such as schemas). */
  parts: Record<string, { is: string[]; says: string; shared?: string[] }>;
  never: [from: string, to: string, why: string][];
}

/** Where an import may not come from and go to: each side a folder prefix or a package test. */
export interface ForbiddenImport {
  /** Folder prefixes of the importing files. */
  from: string[];
  /** Repository paths (a folder, or one module) or package names the files must not import. */
  to: Target[];
  /** Shown with each violation: the rule, and why. */
  rule: string;
}

export type Target =
  { folder: string; except?: string[] } | { packages: (specifier: string) => boolean; label: string };

/** Koa and its family (`koa`, `koa-*`, `@koa/*`): the HTTP framework. */
export const isKoa = (specifier: string) =>
  /^(?:koa(?:-[\w.-]+)?|@koa\/[\w.-]+|@types\/koa[\w.-]*)(?:\/|$)/.test(specifier);

/** The intent's `never` arrows as forbidden imports between the named parts' folders. */
export function neverRules(intent: ArchitectureIntent): ForbiddenImport[] {
  return intent.never.map(([from, to, why]) => {
    const part = (name: string) => {
      const found = intent.parts[name];
      if (!found) throw new Error(`docs/architecture-intent.json: "never" names an unknown part ${name}`);
      return found.is;
    };
    const except = intent.parts[to]?.shared ?? [];
    return { from: part(from), to: part(to).map((folder) => ({ folder, except })), rule: `${from} → ${to}: ${why}` };
  });
}

export interface Violation {
  edge: Edge;
  rule: string;
}

const within = (file: string, folder: string) => `${file}/`.startsWith(folder.endsWith("/") ? folder : `${folder}/`);

function hits(edge: Edge, target: Target): boolean {
  if ("folder" in target)
    return (
      !isPackage(edge.specifier) &&
      within(edge.to, target.folder) &&
      !(target.except ?? []).some((folder) => within(edge.to, folder))
    );
  return isPackage(edge.specifier) && target.packages(edge.specifier);
}

const isPackage = (specifier: string) => !specifier.startsWith(".") && !specifier.startsWith("/");

/** Every edge that some rule forbids, once per rule. */
export function violations(edges: Edge[], rules: ForbiddenImport[]): Violation[] {
  const found: Violation[] = [];
  for (const rule of rules) {
    for (const edge of edges) {
      if (rule.from.some((folder) => within(edge.from, folder)) && rule.to.some((target) => hits(edge, target))) {
        found.push({ edge, rule: rule.rule });
      }
    }
  }
  return found;
}

export function describeViolation({ edge, rule }: Violation): string {
  const type = edge.typeOnly ? " (type only)" : "";
  return `${edge.from}:${edge.line} → ${edge.specifier} [${edge.to}]${type} — ${rule}`;
}
