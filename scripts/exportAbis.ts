/**
 * Writes abis/ from the compiled artifacts: the contracts' ABIs as `as const` literals (so viem/Ponder infer event
 * and function types), the interfaces' enums, the role ids and the byte codecs (scripts/abis/contractKnowledge.ts).
 * Run after `hardhat build`; never edit the output (test/contracts/Abis.test.ts checks it).
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { contractKnowledge } from "./abis/contractKnowledge.ts";

const files = await contractKnowledge();
await mkdir("abis", { recursive: true });
for (const [name, content] of files) await writeFile(path.join("abis", name), content);
console.log(`Wrote abis/: ${[...files.keys()].join(", ")}`);
