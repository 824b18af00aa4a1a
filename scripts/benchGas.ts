/**
 * `npm run bench:gas`: the reference lifecycle on an in-process chain at the London hardfork (the EVM version
 * deployed to Besu), gas of every step from its receipt, written to docs/benchmarks.md (section "gas").
 *
 * Reference lifecycle: create (mint), 3 documents, submit, stage 1 SEQUENTIAL [A, B], stage 2 PARALLEL [C, D]
 * with ALL, final approval. Extra rows measure the other hot paths (a second mint for the same applicant, a new
 * version in draft and under review).
 */
import { network } from "hardhat";
import type { ContractTransactionResponse } from "ethers";
import { machineLine, writeBenchmarkSection } from "./lib/benchmarkReport.ts";

const { ethers } = await network.create();
const signers = await ethers.getSigners();
const [deployer, applicant, otherApplicant] = signers;
const wallets = signers.slice(5, 9);
const id = ethers.id;
const b32 = ethers.encodeBytes32String;

const token = await ethers.deployContract("LicenceToken", ["Licence", "LIC", "", deployer.address]);
const documents = await ethers.deployContract("DocumentRegistry", [await token.getAddress(), deployer.address]);
const registry = await ethers.deployContract("ApprovalRegistry", [
  await token.getAddress(),
  await documents.getAddress(),
  deployer.address,
]);
const registryAddress = await registry.getAddress();
await token.grantRole(id("REGISTRY_ROLE"), registryAddress);
await documents.grantRole(id("REGISTRY_ROLE"), registryAddress);
await documents.setReviewRegistry(registryAddress);
for (const c of [token, documents, registry]) await c.grantRole(id("OPERATOR_ROLE"), deployer.address);
for (const c of [token, registry]) await c.grantRole(id("ADMIN_ROLE"), deployer.address);
const names = ["A", "B", "C", "D"];
for (const [i, name] of names.entries()) await registry.registerDepartment(b32(name), wallets[i].address);
const stage = (executionType: number, departments: string[]) => ({
  executionType, completion: 0, threshold: 0, onTimeout: 0, onRejection: 0, timeoutSeconds: 0, mandatoryMask: 0,
  departments: departments.map(b32),
});
const PERMIT = b32("BUILDING_PERMIT");
await registry.registerWorkflow(PERMIT, id("definition"), 365n * 86400n, [stage(0, ["A", "B"]), stage(1, ["C", "D"])]);

interface Row { step: string; gas: bigint; budget?: bigint; inLifecycle: boolean }
const rows: Row[] = [];
async function measure(step: string, tx: Promise<ContractTransactionResponse>, options: { budget?: bigint; inLifecycle?: boolean } = {}) {
  const receipt = await (await tx).wait();
  if (!receipt || receipt.status !== 1) throw new Error(`${step} failed`);
  rows.push({ step, gas: receipt.gasUsed, budget: options.budget, inLifecycle: options.inLifecycle ?? true });
  console.log(`${step.padEnd(58)} ${receipt.gasUsed.toString().padStart(8)}`);
}
const sha = (text: string) => ethers.sha256(ethers.toUtf8Bytes(text));
const uuid = (n: number) => ethers.zeroPadValue(ethers.toBeHex(n), 16);
const remarks = id("remarks");

console.log("Reference lifecycle (gas per transaction):");
await measure("create request: mint to a new applicant", token.mint(applicant.address, 1n, PERMIT), { budget: 75_000n });
await measure("document 1, version 1 (first of the request)", documents.anchorDocument(1n, uuid(1), b32("SITE_PLAN"), sha("plan v1")));
await measure("document 2, version 1", documents.anchorDocument(1n, uuid(2), b32("OWNERSHIP"), sha("deed v1")));
await measure("document 3, version 1", documents.anchorDocument(1n, uuid(3), b32("FIRE_SAFETY"), sha("fire v1")));
await measure("submit", registry.submit(1n));
await measure("stage 1 SEQUENTIAL: A approves (non-final)", registry.connect(wallets[0]).approve(1n, 0b111, remarks), { budget: 55_000n });
await measure("stage 1 SEQUENTIAL: B approves (completes stage 1)", registry.connect(wallets[1]).approve(1n, 0b111, remarks));
await measure("stage 2 PARALLEL: C approves (non-final)", registry.connect(wallets[2]).approve(1n, 0b011, remarks), { budget: 55_000n });
await measure("stage 2 PARALLEL: D approves (final: licence issued)", registry.connect(wallets[3]).approve(1n, 0b100, remarks));
const lifecycle = rows.filter((r) => r.inLifecycle).reduce((sum, r) => sum + r.gas, 0n);
console.log(`${"reference lifecycle total".padEnd(58)} ${lifecycle.toString().padStart(8)}`);

console.log("\nOther paths:");
await measure("create request: mint to an applicant who holds one", token.mint(applicant.address, 2n, PERMIT), { budget: 75_000n, inLifecycle: false });
await measure("create request: mint to another new applicant", token.mint(otherApplicant.address, 3n, PERMIT), { budget: 75_000n, inLifecycle: false });
await documents.anchorDocument(2n, uuid(10), b32("SITE_PLAN"), sha("r2 plan v1"));
await documents.anchorDocument(2n, uuid(11), b32("OWNERSHIP"), sha("r2 deed v1"));
await measure("new document version (draft)", documents.anchorVersion(sha("r2 plan v1"), sha("r2 plan v2")), { budget: 50_000n, inLifecycle: false });
await measure("new document version (draft, again)", documents.anchorVersion(sha("r2 plan v2"), sha("r2 plan v3")), { budget: 50_000n, inLifecycle: false });
await registry.submit(2n);
await registry.connect(wallets[0]).approve(2n, 0b01, remarks);
await measure("new document version under review (invalidates 1 approval)", documents.anchorVersion(sha("r2 plan v3"), sha("r2 plan v4")), { inLifecycle: false });
await measure("new document version under review (no approval affected)", documents.anchorVersion(sha("r2 deed v1"), sha("r2 deed v2")), { inLifecycle: false });

const verdict = (r: Row) => (r.budget === undefined ? "" : r.gas <= r.budget ? `≤ ${r.budget} ✅` : `≤ ${r.budget} ❌ (+${r.gas - r.budget})`);
const table = [
  "| Step | Gas | Budget |",
  "|---|---:|---|",
  ...rows.filter((r) => r.inLifecycle).map((r) => `| ${r.step} | ${r.gas} | ${verdict(r)} |`),
  `| **Reference lifecycle total** | **${lifecycle}** | ${lifecycle <= 450_000n ? "≤ 450000 ✅" : `≤ 450000 ❌ (+${lifecycle - 450_000n})`} |`,
  ...rows.filter((r) => !r.inLifecycle).map((r) => `| ${r.step} | ${r.gas} | ${verdict(r)} |`),
].join("\n");

await writeBenchmarkSection(
  "gas",
  `## Gas (\`npm run bench:gas\`)

Measured ${new Date().toISOString().slice(0, 10)} on ${machineLine()}; in-process Hardhat/EDR chain at the London
hardfork with the contracts as compiled for deployment (solc 0.8.34, optimizer runs 200, evmVersion london).
Gas is each transaction's \`gasUsed\`, base cost 21,000 included. For comparison: storing a 32-byte hash in a
new slot costs ≈ 43,600 and an EAS attestation ≈ 200,000.

${table}

**Where the gas goes, and why three budgets are not met.** Each figure is 21,000 (transaction) + calldata +
storage + events; the storage each operation needs for the chain to be authoritative sets its floor:

- *Mint to a new applicant* (budget 75,000): the licence record (owner, status, reason, pinned workflow and expiry
  packed in one new slot, 22,100), the ERC-721 balance of a new owner (22,100), the operator role check and the
  active-workflow read that pins the request (2 × 2,100), and the three events ERC-721, ERC-5192 and the indexer
  need (Transfer, Locked, LicenceMinted: 4,700). A returning applicant's mint writes an existing balance slot and
  costs ≈ 60,200. Removing LicenceMinted would save ≈ 1,900 and still not reach 75,000.
- *New document version* (budget 50,000): a new slot for the hash record, so lookup by hash works from chain state
  (22,100), plus the per-request word of latest versions that enforces versions 1..n and editability (5,000), the
  record of the previous version it supersedes (2,100) and the role check (2,100): 52,300 of storage and base cost
  before calldata and the event. We keep these checks: without them an operator could anchor versions out of order
  or after a licence is decided.
- *Reference lifecycle* (budget 450,000): beyond the per-operation costs above, the first document of a request
  creates its per-request document word (+22,100) and checks the token is a Draft; \`submit\` creates the request's
  review slot (22,100) and moves token status and document phase (two cross-contract writes); completing a stage
  archives its decisions (22,100) so a later document update can invalidate an approval given in an earlier stage;
  the final approval issues the licence and locks the documents (two cross-contract writes).
- A *non-final approval* is one write to the request's existing review slot plus the reviewed-versions read and
  the event: within budget.`,
);
console.log("\nWritten to docs/benchmarks.md (section gas).");
