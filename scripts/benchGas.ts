/**
 * `npm run bench:gas`: the reference lifecycle on an in-process chain at the London hardfork (the EVM version
 * deployed to Besu), gas of every step from its receipt, written to docs/benchmarks.md (section "gas").
 *
 * Reference lifecycle: create (mint), 3 documents, submit, stage 1 SEQUENTIAL [A, B], stage 2 PARALLEL [C, D]
 * with ALL, final approval. Extra rows measure the other hot paths (a second mint for the same applicant, a new
 * version in draft and under review).
 */
import { writeFile } from "node:fs/promises";
import { network } from "hardhat";
import { ROLES } from "../abis/index.ts";
import type { ContractTransactionResponse } from "ethers";
import { machineLine, table, writeBenchmarkSection } from "./bench/benchReport.ts";
import { GAS_PARTS, emptyBreakdown, gasBreakdown, type GasBreakdown } from "./bench/gasBreakdown.ts";
import { DECISION_TYPES, DEPARTMENT_KEY_TYPES } from "../abis/index.ts";

const { ethers } = await network.create();
const signers = await ethers.getSigners();
// Governance (DEFAULT_ADMIN_ROLE), administration and the operator are three keys, as every deployment makes them.
const [deployer, applicant, otherApplicant, admin, operator] = signers;
const wallets = signers.slice(5, 9);
const holder = signers[9]; // a department that holds its own key (EIP-712 decisions relayed by the operator)
const owners = signers.slice(10, 13).sort((a, b) => (BigInt(a.address) < BigInt(b.address) ? -1 : 1));
const id = ethers.id;
const b32 = ethers.encodeBytes32String;
const WALLET_DELAY = 86_400n;

const token = await ethers.deployContract("LicenceToken", ["Licence", "LIC", "", deployer.address]);
const documents = await ethers.deployContract("DocumentRegistry", [await token.getAddress(), deployer.address]);
const verifier = await ethers.deployContract("DecisionVerifier");
const extension = await ethers.deployContract("RegistryExtension");
const registry = await ethers.deployContract("ApprovalRegistry", [
  await token.getAddress(),
  await documents.getAddress(),
  await verifier.getAddress(),
  await extension.getAddress(),
  deployer.address,
  WALLET_DELAY,
]);
const registryAddress = await registry.getAddress();
await token.setApprovalRegistry(registryAddress);
await documents.setReviewRegistry(registryAddress);
for (const c of [token, documents, registry]) await c.grantRole(ROLES.OPERATOR_ROLE, operator.address);
for (const c of [token, registry]) await c.grantRole(ROLES.ADMIN_ROLE, admin.address);
// Who decides is governance's: departments (each proving its key) and workflow versions.
const asGovernance = registry.connect(deployer);
const [, domainName, domainVersion, domainChainId, , domainSalt] = await registry.eip712Domain();
const domain = {
  name: domainName,
  version: domainVersion,
  chainId: domainChainId,
  verifyingContract: registryAddress,
  salt: domainSalt,
};
type KeySigner = { signTypedData: (typeof holder)["signTypedData"] };
const keyProof = (signer: KeySigner, name: string, wallet: string, custody: number) =>
  signer.signTypedData(domain, DEPARTMENT_KEY_TYPES, { code: b32(name), wallet, custody });
const names = ["A", "B", "C", "D"];
for (const [i, name] of names.entries()) {
  await asGovernance.registerDepartment(
    b32(name),
    wallets[i].address,
    0,
    await keyProof(wallets[i], name, wallets[i].address, 0),
  );
}
// E: department-held EOA; F: department-held 2-of-3 EIP-1271 owners wallet (the test wallet standing in for a Safe).
const multisig = await ethers.deployContract("OwnersWallet", [owners.map((o) => o.address), 2n]);
const multisigAddress = await multisig.getAddress();
await asGovernance.registerDepartment(b32("E"), holder.address, 1, await keyProof(holder, "E", holder.address, 1));
await asGovernance.registerDepartment(
  b32("F"),
  multisigAddress,
  1,
  ethers.concat(await Promise.all(owners.slice(0, 2).map((o) => keyProof(o, "F", multisigAddress, 1)))),
);
const stage = (executionType: number, departments: string[]) => ({
  executionType,
  completion: 0,
  threshold: 0,
  onTimeout: 0,
  onRejection: 0,
  timeoutSeconds: 0,
  mandatoryMask: 0,
  departments: departments.map(b32),
});
const PERMIT = b32("BUILDING_PERMIT");
const SIGNED = b32("SIGNED_PERMIT");
await asGovernance.registerWorkflow(PERMIT, id("definition"), 365n * 86400n, [
  stage(0, ["A", "B"]),
  stage(1, ["C", "D"]),
]);
await asGovernance.registerWorkflow(SIGNED, id("signed"), 365n * 86400n, [stage(1, ["E", "F", "A"])]);

interface Row {
  step: string;
  gas: bigint;
  budget?: bigint;
  inLifecycle: boolean;
  parts: GasBreakdown;
}
const rows: Row[] = [];
/** The steps measured from here on are the reference lifecycle's until this is false ("other paths"). */
let inLifecycle = true;
async function measure(step: string, tx: Promise<ContractTransactionResponse>, budget?: bigint) {
  const sent = await tx;
  const receipt = await sent.wait();
  if (!receipt || receipt.status !== 1) throw new Error(`${step} failed`);
  const send = (method: string, params: unknown[]) => ethers.provider.send(method, params);
  const parts = await gasBreakdown(send, { hash: receipt.hash, data: sent.data, gasUsed: receipt.gasUsed });
  rows.push({ step, gas: receipt.gasUsed, budget, inLifecycle, parts });
  console.log(`${step.padEnd(66)} ${receipt.gasUsed.toString().padStart(8)}`);
}
const sha = (text: string) => ethers.sha256(ethers.toUtf8Bytes(text));
const uuid = (n: number) => ethers.zeroPadValue(ethers.toBeHex(n), 16);
const remarks = id("remarks");
const commitment = (n: number) => id(`applicant ${n} + salt`);
const ops = {
  token: token.connect(operator),
  documents: documents.connect(operator),
  registry: registry.connect(operator),
};
/**
 * An approval as the department saw it: the current stage and round, the latest hash of each document of `mask`
 * (from the anchoring events), the department's next nonce, an hour to be mined.
 */
async function approval(departmentId: bigint, tokenId: bigint, mask: number) {
  const progress = await registry.progressOf(tokenId);
  const [, count, latest] = await documents.documentsOf(tokenId);
  const anchored = new Map<string, string>();
  for (const log of await documents.queryFilter(documents.filters.DocumentAnchored(tokenId))) {
    anchored.set(`${log.args.docIndex}:${log.args.version}`, log.args.sha256Hash);
  }
  const covered = [...Array(Number(count)).keys()].filter((i) => (mask >> i) & 1);
  return {
    tokenId,
    departmentId,
    stage: progress.stage,
    round: progress.stageStartedAt,
    decision: 1n,
    reasonCode: 0n,
    reviewedMask: BigInt(mask),
    documents: covered.map((i) => anchored.get(`${i}:${latest[i]}`)!),
    remarksHash: remarks,
    nonce: (await registry.departmentRecord(departmentId)).nonce,
    deadline: BigInt((await ethers.provider.getBlock("latest"))!.timestamp) + 3600n,
  };
}
/** A custodial department's approval, sent from its own wallet (departments A..D are ids 1..4). */
const approve = async (wallet: number, tokenId: bigint, mask: number) =>
  registry.connect(wallets[wallet]).decide(await approval(BigInt(wallet + 1), tokenId, mask));

console.log("Reference lifecycle (gas per transaction):");
const mint = (to: string, tokenId: bigint, type = PERMIT) =>
  ops.token.mint(to, tokenId, type, commitment(Number(tokenId)));
const anchor = (tokenId: bigint, n: number, type: string, text: string) =>
  ops.documents.anchorDocument(tokenId, uuid(n), b32(type), sha(text));
const newVersion = (from: string, to: string) => ops.documents.anchorVersion(2n, sha(from), sha(to));
await measure("create request: mint to a new applicant", mint(applicant.address, 1n), 75_000n);
await measure("document 1, version 1 (first of the request)", anchor(1n, 1, "SITE_PLAN", "plan v1"));
await measure("document 2, version 1", anchor(1n, 2, "OWNERSHIP", "deed v1"));
await measure("document 3, version 1", anchor(1n, 3, "FIRE_SAFETY", "fire v1"));
await measure("submit", ops.registry.submit(1n));
await measure("stage 1 SEQUENTIAL: A approves (non-final, custodial)", approve(0, 1n, 0b111), 55_000n);
await measure("stage 1 SEQUENTIAL: B approves (completes stage 1)", approve(1, 1n, 0b111));
await measure("stage 2 PARALLEL: C approves (non-final, custodial)", approve(2, 1n, 0b011), 55_000n);
await measure("stage 2 PARALLEL: D approves (final: licence issued)", approve(3, 1n, 0b100));
const lifecycle = rows.reduce((sum, r) => sum + r.gas, 0n);
console.log(`${"reference lifecycle total".padEnd(66)} ${lifecycle.toString().padStart(8)}`);

console.log("\nOther paths:");
inLifecycle = false;
await measure("create request: mint to an applicant who holds one", mint(applicant.address, 2n), 75_000n);
await measure("create request: mint to another new applicant", mint(otherApplicant.address, 3n), 75_000n);
await anchor(2n, 10, "SITE_PLAN", "r2 plan v1");
await anchor(2n, 11, "OWNERSHIP", "r2 deed v1");
await measure("new document version (draft)", newVersion("r2 plan v1", "r2 plan v2"), 52_000n);
await measure("new document version (draft, again)", newVersion("r2 plan v2", "r2 plan v3"), 52_000n);
await ops.registry.submit(2n);
await approve(0, 2n, 0b01);
await measure("new document version under review (invalidates 1 approval)", newVersion("r2 plan v3", "r2 plan v4"));
await measure("new document version under review (no approval affected)", newVersion("r2 deed v1", "r2 deed v2"));
await measure(
  "new document added under review (reopens every stage's approvals)",
  anchor(2n, 12, "EXTRA", "r2 extra v1"),
);

// Signed decisions (department-held keys), relayed by the operator: token 4 under the one-stage PARALLEL [E, F, A].
await mint(otherApplicant.address, 4n, SIGNED);
for (let i = 0; i < 3; i++) await anchor(4n, 20 + i, `DOC_${i}`, `r4 doc ${i}`);
await ops.registry.submit(4n);
const signed = (departmentId: bigint) => approval(departmentId, 4n, 0b111);
const byHolder = await signed(5n);
await measure(
  "non-final approval, EIP-712 signature (ECDSA), relayed",
  ops.registry.decideBySig(byHolder, await holder.signTypedData(domain, DECISION_TYPES, byHolder)),
  65_000n,
);
const byMultisig = await signed(6n);
const multisigSignature = ethers.concat(
  await Promise.all(owners.slice(0, 2).map((o) => o.signTypedData(domain, DECISION_TYPES, byMultisig))),
);
await measure(
  "non-final approval, EIP-1271 wallet (2 of 3 owners), relayed",
  ops.registry.decideBySig(byMultisig, multisigSignature),
);

const LIFECYCLE_BUDGET = 520_000n;
const verdict = (gas: bigint, budget?: bigint) =>
  budget === undefined ? "" : gas <= budget ? `≤ ${budget} ✅` : `≤ ${budget} ❌ (+${gas - budget})`;
const [inside, outside] = [rows.filter((r) => r.inLifecycle), rows.filter((r) => !r.inLifecycle)];
const total = "**Reference lifecycle total**";
const budgets = table(
  ["Step", "Gas", "Budget"],
  [
    ...inside.map((r) => [r.step, String(r.gas), verdict(r.gas, r.budget)]),
    [total, `**${lifecycle}**`, verdict(lifecycle, LIFECYCLE_BUDGET)],
    ...outside.map((r) => [r.step, String(r.gas), verdict(r.gas, r.budget)]),
  ],
  ["---", "---:", "---"],
).join("\n");

/** Each step's gas by what it paid for, from the node's trace (scripts/bench/gasBreakdown.ts). */
const partsRow = (step: string, gas: bigint, p: GasBreakdown) => [
  step,
  String(gas),
  String(p.intrinsic.gas),
  ...(["newSlots", "slotRewrites", "reads", "events", "calls"] as const).map((k) => `${p[k].gas} (${p[k].count})`),
  String(p.execution.gas),
  String(p.refund ? -p.refund : 0),
];
const sum = emptyBreakdown();
for (const { parts } of inside) {
  for (const k of GAS_PARTS) ((sum[k].gas += parts[k].gas), (sum[k].count += parts[k].count));
  sum.refund += parts.refund;
}
const breakdown = table(
  "Step|Gas|Intrinsic (21,000 + calldata)|New slots (n)|Slot rewrites (n)|Reads (cold n)|Events (n)|Calls between contracts (n)|Hashing and other execution|Refund".split(
    "|",
  ),
  [
    ...inside.map((r) => partsRow(r.step, r.gas, r.parts)),
    partsRow(total, lifecycle, sum),
    ...outside.map((r) => partsRow(r.step, r.gas, r.parts)),
  ],
  ["---", ...Array(9).fill("---:")],
).join("\n");

await writeBenchmarkSection(
  "gas",
  `## Gas (\`npm run bench:gas\`)

Measured ${new Date().toISOString().slice(0, 10)} on ${machineLine()}; in-process Hardhat/EDR chain at the London
hardfork with the contracts as compiled for deployment (solc 0.8.34, optimizer runs 200, evmVersion london).
Gas is each transaction's \`gasUsed\`, base cost 21,000 included. For comparison: storing a 32-byte hash in a
new slot costs ≈ 43,600 and an EAS attestation ≈ 200,000.

${budgets}

Where each step's gas goes, from the chain's own trace of the transaction (every opcode charged what the EVM took
for it; the parts add up to the gas used). Setting a new slot costs 20,000 and rewriting one 2,900 (100 when
written again), with 2,100 more for its first, cold, access (counted with the reads); a cold read is 2,100, a warm
one 100; a call to another contract costs 2,600 for its cold account (100 when warm):

${breakdown}`,
);
console.log("\nWritten to docs/benchmarks.md (section gas).");

// `npm run bench` asks for the four figures of docs/benchmarks.json in a file of their own.
if (process.env.BENCH_GAS_JSON) {
  const gasOf = (step: string) => {
    const row = rows.find((r) => r.step === step);
    if (!row) throw new Error(`gas: no step "${step}"`);
    return Number(row.gas);
  };
  const figures = {
    mint: gasOf("create request: mint to a new applicant"),
    anchorVersion: gasOf("new document version (draft)"),
    approval: gasOf("stage 1 SEQUENTIAL: A approves (non-final, custodial)"),
    lifecycle: Number(lifecycle),
  };
  await writeFile(process.env.BENCH_GAS_JSON, JSON.stringify(figures));
}
