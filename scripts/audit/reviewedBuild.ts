/**
 * The reviewed build (abis/build.json): for each contract deployed and each library linked, the runtime code the
 * compiler made from the reviewed sources, where deployment writes into it, and the sources (by keccak256), compiler
 * and settings. Immutables are named ("ApprovalRegistry.licenceToken") rather than keyed by AST id, which depends on
 * what else was compiled alongside.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { keccak256, toUtf8Bytes } from "ethers";

export type ByteRange = { start: number; length: number };

/** solc's link references: source name -> library name -> where the code holds its address. */
export type LinkReferences = Record<string, Record<string, ByteRange[]>>;

export interface ReviewedContract {
  /** The source unit that declares it, as the compiler named it (Hardhat: "project/contracts/…"). */
  sourceName: string;
  /** Creation code, 0x hex, as deployment sends it before the constructor's arguments (ignition/reviewedArtifacts.ts). */
  bytecode: string;
  /** Runtime code, 0x hex. Immutables are zeros; a linked library's address is a `__$…$__` placeholder. */
  deployedBytecode: string;
  /** Immutables by "<declaring contract>.<name>": their Solidity type and where the runtime code holds them. */
  immutableReferences: Record<string, { typeString: string; ranges: ByteRange[] }>;
  linkReferences: LinkReferences;
  deployedLinkReferences: LinkReferences;
  /** Every source file the contract was compiled from (its imports, transitively): name -> keccak256 of the content. */
  sources: Record<string, string>;
}

export interface ReviewedBuild {
  compiler: { version: string; settings: Record<string, unknown> };
  contracts: Record<string, ReviewedContract>;
}

/** The parts of solc's standard JSON output the build is made of (immutables: runtime code only). */
type SolcCode = { object: string; linkReferences: LinkReferences; immutableReferences?: Record<string, ByteRange[]> };
export interface SolcOutput {
  contracts: Record<string, Record<string, { evm: { bytecode: SolcCode; deployedBytecode: SolcCode } }>>;
  sources: Record<string, { ast: AstNode }>;
}

type AstNode = { nodeType?: string; id?: number; name?: string; [key: string]: unknown };

export const REVIEWED_BUILD_FILE = path.resolve(import.meta.dirname, "../../abis/build.json");

/** What solc must output for each compiled contract, and the ASTs that name immutables and list imports. */
export const OUTPUT_SELECTION = [
  "evm.bytecode.object",
  "evm.bytecode.linkReferences",
  "evm.deployedBytecode.object",
  "evm.deployedBytecode.immutableReferences",
  "evm.deployedBytecode.linkReferences",
];

/** The settings that shape the code: everything of the compiler input but what it is asked to output. */
export function codeSettings(settings: Record<string, unknown>): Record<string, unknown> {
  const { outputSelection, ...rest } = settings;
  void outputSelection;
  return sortKeys(rest) as Record<string, unknown>;
}

/** One contract of a compiler output; `content` gives the text of a source file the compiler read. */
export function reviewedContract(
  name: string,
  sourceName: string,
  output: SolcOutput,
  content: (sourceName: string) => string,
): ReviewedContract {
  const compiled = output.contracts[sourceName]?.[name];
  if (!compiled) throw new Error(`${name} is not in the compiler output for ${sourceName}`);
  const { bytecode, deployedBytecode } = compiled.evm;
  const declarations = new Map<number, AstNode>();
  const contractNames = new Map<number, string>();
  for (const { ast } of Object.values(output.sources)) {
    for (const node of nodes(ast)) {
      if (node.nodeType === "VariableDeclaration" && node.mutability === "immutable") declarations.set(node.id!, node);
      if (node.nodeType === "ContractDefinition") contractNames.set(node.id!, node.name!);
    }
  }
  const immutableReferences: ReviewedContract["immutableReferences"] = {};
  for (const [astId, ranges] of Object.entries(deployedBytecode.immutableReferences ?? {})) {
    const declaration = declarations.get(Number(astId));
    if (!declaration) throw new Error(`${name}: immutable #${astId} is declared in no source of the output`);
    const key = `${contractNames.get(declaration.scope as number)}.${declaration.name}`;
    const typeString = (declaration.typeDescriptions as { typeString: string }).typeString;
    immutableReferences[key] = { typeString, ranges: ranges.map(({ start, length }) => ({ start, length })) };
  }
  const sources: Record<string, string> = {};
  for (const source of importClosure(sourceName, output)) sources[source] = keccak256(toUtf8Bytes(content(source)));
  return {
    sourceName,
    bytecode: `0x${bytecode.object.replace(/^0x/, "")}`,
    deployedBytecode: `0x${deployedBytecode.object.replace(/^0x/, "")}`,
    immutableReferences: sortKeys(immutableReferences) as ReviewedContract["immutableReferences"],
    linkReferences: sortKeys(bytecode.linkReferences) as LinkReferences,
    deployedLinkReferences: sortKeys(deployedBytecode.linkReferences) as LinkReferences,
    sources: sortKeys(sources) as Record<string, string>,
  };
}

/** The libraries a contract's code links (creation or runtime), as "source name" -> names. */
export function linkedLibraries(contract: ReviewedContract): { sourceName: string; name: string }[] {
  const found = new Map<string, { sourceName: string; name: string }>();
  for (const references of [contract.linkReferences, contract.deployedLinkReferences])
    for (const [sourceName, libraries] of Object.entries(references))
      for (const name of Object.keys(libraries)) found.set(`${sourceName}:${name}`, { sourceName, name });
  return [...found.values()];
}

/** The file as written: two-space JSON, keys in a fixed order, so that two builds compare as text. */
export function reviewedBuildJson(build: ReviewedBuild): string {
  return `${JSON.stringify({ compiler: build.compiler, contracts: sortKeys(build.contracts) }, null, 2)}\n`;
}

export async function readReviewedBuild(file = REVIEWED_BUILD_FILE): Promise<ReviewedBuild> {
  let build: ReviewedBuild;
  try {
    build = JSON.parse(await readFile(file, "utf8"));
  } catch (error) {
    throw new Error(`cannot read the reviewed build ${file}: ${(error as Error).message}`);
  }
  const valid =
    typeof build?.compiler?.version === "string" &&
    build.contracts !== null &&
    typeof build.contracts === "object" &&
    Object.values(build.contracts).every((c) =>
      [c.bytecode, c.deployedBytecode].every((code) => /^0x([0-9a-fA-F]{2}|__\$[0-9a-fA-F]{34}\$__)*$/.test(code)),
    );
  if (!valid) throw new Error(`${file} is not a reviewed build (abis/build.json, written by npm run abis)`);
  return build;
}

/**
 * The reviewed build from Hardhat's artifacts and build info, for `contractNames` (the contracts a deployment
 * creates) and every library they link. All must come from one compiler with one set of settings.
 */
export async function reviewedBuildFromArtifacts(
  artifactsDir: string,
  contractNames: string[],
): Promise<ReviewedBuild> {
  const contracts: Record<string, ReviewedContract> = {};
  let compiler: ReviewedBuild["compiler"] | undefined;
  const pending = contractNames.map((name) => ({ name, sourceName: undefined as string | undefined }));
  for (let next = pending.shift(); next; next = pending.shift()) {
    if (contracts[next.name]) continue;
    const artifact = await artifactOf(artifactsDir, next.name, next.sourceName);
    const buildInfo = path.join(artifactsDir, "build-info", artifact.buildInfoId);
    const input = JSON.parse(await readFile(`${buildInfo}.json`, "utf8"));
    const { output } = JSON.parse(await readFile(`${buildInfo}.output.json`, "utf8")) as { output: SolcOutput };
    const used = { version: input.solcLongVersion as string, settings: codeSettings(input.input.settings) };
    if (compiler && JSON.stringify(compiler) !== JSON.stringify(used))
      throw new Error(`${next.name} was compiled by another compiler or with other settings than the others`);
    compiler = used;
    const sources = input.input.sources as Record<string, { content: string }>;
    const contract = reviewedContract(next.name, artifact.inputSourceName, output, (source) => {
      if (sources[source]?.content === undefined)
        throw new Error(`${source} is not in build info ${artifact.buildInfoId}`);
      return sources[source].content;
    });
    contracts[next.name] = contract;
    pending.push(...linkedLibraries(contract));
  }
  if (!compiler) throw new Error("no contract to put in the reviewed build");
  return { compiler, contracts };
}

async function artifactOf(
  artifactsDir: string,
  name: string,
  inputSourceName?: string,
): Promise<{ inputSourceName: string; buildInfoId: string }> {
  // Hardhat 3 keeps an artifact under the source's path without its "project/" prefix (a library of a package
  // under "npm/…"); a contract named by the deployment alone is looked up as contracts/<Name>.sol.
  const sourcePath = inputSourceName?.replace(/^project\//, "") ?? `contracts/${name}.sol`;
  const file = path.join(artifactsDir, sourcePath, `${name}.json`);
  try {
    return JSON.parse(await readFile(file, "utf8"));
  } catch (error) {
    throw new Error(`no artifact for ${name} (${file}): was \`hardhat build\` run? ${(error as Error).message}`);
  }
}

/**
 * Contracts the platform deploys at run time rather than Ignition (a department's passkey account, through the
 * chain gateway): their creation code is taken from the reviewed build, so they are in it too.
 */
export const RUNTIME_DEPLOYED_CONTRACTS = ["DepartmentPasskeyAccount"];

/** Ignition's future types that deploy code: from an artifact given to the module, or one named for Hardhat's. */
const DEPLOYMENTS = new Set([
  "CONTRACT_DEPLOYMENT",
  "LIBRARY_DEPLOYMENT",
  "NAMED_ARTIFACT_CONTRACT_DEPLOYMENT",
  "NAMED_ARTIFACT_LIBRARY_DEPLOYMENT",
]);

/**
 * The contracts an Ignition module deploys (its contract and library deployments, submodules included): the
 * ones whose code the reviewed build must hold. Typed structurally so the auditor needs no Ignition at run time.
 */
export function deployedContractNames(module: IgnitionModuleLike): string[] {
  const names = new Set<string>();
  const visit = (m: IgnitionModuleLike) => {
    for (const future of m.futures)
      if (DEPLOYMENTS.has(future.type) && future.contractName) names.add(future.contractName);
    for (const sub of m.submodules) visit(sub);
  };
  visit(module);
  return [...names];
}

export type IgnitionModuleLike = {
  futures: Iterable<{ type: string; contractName?: string }>;
  submodules: Iterable<IgnitionModuleLike>;
};

/** The source and every source it imports, transitively (solc's ImportDirective.absolutePath). */
function importClosure(root: string, output: SolcOutput): string[] {
  const seen = new Set<string>();
  const visit = (source: string) => {
    if (seen.has(source)) return;
    const ast = output.sources[source]?.ast;
    if (!ast) throw new Error(`${source} is not in the compiler output`);
    seen.add(source);
    for (const node of nodes(ast)) if (node.nodeType === "ImportDirective") visit(node.absolutePath as string);
  };
  visit(root);
  return [...seen];
}

function* nodes(node: unknown): Generator<AstNode> {
  if (Array.isArray(node)) for (const child of node) yield* nodes(child);
  else if (node !== null && typeof node === "object") {
    yield node as AstNode;
    for (const child of Object.values(node)) if (child !== null && typeof child === "object") yield* nodes(child);
  }
}

/** Objects with their keys sorted, recursively (arrays keep their order). */
function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, sortKeys((value as Record<string, unknown>)[key])]),
  );
}
