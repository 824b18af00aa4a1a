/**
 * Writes abis/ from the compiled artifacts: the contracts' ABIs as `as const` literals (so viem/Ponder infer event
 * and function types), the interfaces' enums, the role ids and the byte codecs (scripts/abis/contractKnowledge.ts),
 * and build.json, the reviewed build the auditor holds deployed code to (scripts/audit/reviewedBuild.ts).
 * Run after `hardhat build`; never edit the output (test/contracts/Abis.test.ts and ReviewedBuild.test.ts check it).
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { contractKnowledge } from "./abis/contractKnowledge.ts";
import {
  deployedContractNames,
  reviewedBuildFromArtifacts,
  reviewedBuildJson,
  RUNTIME_DEPLOYED_CONTRACTS,
} from "./audit/reviewedBuild.ts";

const files = await contractKnowledge();
await mkdir("abis", { recursive: true });
for (const [name, content] of files) await writeFile(path.join("abis", name), content);
// Imported once abis/ is written: the module reads the role ids from it.
const { default: deployment } = await import("../ignition/modules/LicencePlatform.ts");
const build = await reviewedBuildFromArtifacts("artifacts", [
  ...deployedContractNames(deployment),
  ...RUNTIME_DEPLOYED_CONTRACTS,
]);
await writeFile(path.join("abis", "build.json"), reviewedBuildJson(build));
console.log(`Wrote abis/: ${[...files.keys(), "build.json"].join(", ")}`);
