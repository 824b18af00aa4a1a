/**
 * What the Ignition module deploys: the reviewed build (abis/build.json, the code the auditor holds every deployed
 * contract to) with the ABIs of abis/. Deploying from it needs no compiler, so the first `npm start` on a fresh
 * clone deploys in seconds, and what is deployed is exactly what was reviewed: a fresh compile must reproduce the
 * file byte for byte (test/contracts/ReviewedBuild.test.ts). After changing a contract, `npx hardhat build` then
 * `npm run abis` puts the new code here; a contract not in the file yet is taken from Hardhat's artifacts.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import type { Artifact } from "@nomicfoundation/ignition-core";
import {
  ApprovalRegistryAbi,
  DecisionVerifierAbi,
  DocumentRegistryAbi,
  LicenceTokenAbi,
  RegistryExtensionAbi,
} from "../abis/index.ts";

const ABIS = {
  LicenceToken: LicenceTokenAbi,
  DocumentRegistry: DocumentRegistryAbi,
  ApprovalRegistry: ApprovalRegistryAbi,
  DecisionVerifier: DecisionVerifierAbi,
  RegistryExtension: RegistryExtensionAbi,
};
type Deployed = keyof typeof ABIS;

const ROOT = path.resolve(import.meta.dirname, "..");
const BUILD_FILE = path.join(ROOT, "abis", "build.json");

interface BuildEntry {
  sourceName: string;
  bytecode?: string;
  deployedBytecode: string;
  linkReferences: Artifact["linkReferences"];
  deployedLinkReferences: Artifact["deployedLinkReferences"];
}

let build: Record<string, BuildEntry> | undefined;

export function reviewedArtifact<Name extends Deployed>(name: Name): Artifact<(typeof ABIS)[Name]> {
  build ??= (JSON.parse(readFileSync(BUILD_FILE, "utf8")) as { contracts: Record<string, BuildEntry> }).contracts;
  const entry = build[name];
  if (entry?.bytecode)
    return {
      _format: "hh3-artifact-1",
      contractName: name,
      sourceName: entry.sourceName,
      abi: ABIS[name],
      bytecode: entry.bytecode,
      deployedBytecode: entry.deployedBytecode,
      linkReferences: entry.linkReferences,
      deployedLinkReferences: entry.deployedLinkReferences,
    };
  const compiled = path.join(ROOT, "artifacts", "contracts", `${name}.sol`, `${name}.json`);
  if (!existsSync(compiled))
    throw new Error(`${name} is neither in abis/build.json nor compiled: run npx hardhat build, then npm run abis`);
  return JSON.parse(readFileSync(compiled, "utf8"));
}
