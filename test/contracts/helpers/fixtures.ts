import { network } from "hardhat";
import {
  ApprovalRegistryCompletion,
  ApprovalRegistryCustody,
  ApprovalRegistryDecisionStatus,
  ApprovalRegistryExecutionType,
  ApprovalRegistryPhase,
  ApprovalRegistryRejectionAction,
  ApprovalRegistryTimeoutAction,
  bigintEnum,
  DocumentRegistryPhase,
  LicenceTokenStatus,
  LicenceTokenValidity,
  ROLES as GENERATED_ROLES,
} from "../../../abis/index.ts";

/** One in-process chain for the contract tests (snapshotted per test by loadFixture). */
export const connection = await network.create();
export const { ethers, networkHelpers } = connection;

/** Role ids by short name (abis/roles.ts, generated from Roles.sol). */
export const ROLES = {
  DEFAULT_ADMIN: GENERATED_ROLES.DEFAULT_ADMIN_ROLE,
  ADMIN: GENERATED_ROLES.ADMIN_ROLE,
  OPERATOR: GENERATED_ROLES.OPERATOR_ROLE,
  KEEPER: GENERATED_ROLES.KEEPER_ROLE,
} as const;

// Enum values as the contracts number them (abis/enums.ts, generated from the interfaces): bigint where the
// tests compare with what ethers decodes, number where they pass them into structs.
export const Status = bigintEnum(LicenceTokenStatus);
export const Validity = bigintEnum(LicenceTokenValidity);
export const DocPhase = bigintEnum(DocumentRegistryPhase);
export const Execution = ApprovalRegistryExecutionType;
export const Completion = ApprovalRegistryCompletion;
export const OnTimeout = ApprovalRegistryTimeoutAction;
export const OnRejection = ApprovalRegistryRejectionAction;
export const Phase = bigintEnum(ApprovalRegistryPhase);
export const Decision = bigintEnum(ApprovalRegistryDecisionStatus);
export const Custody = bigintEnum(ApprovalRegistryCustody);

/** Seconds between a department wallet's proposal and the earliest time it can take effect, in these tests. */
export const WALLET_DELAY = 24n * 3600n;

export const code = (text: string) => ethers.encodeBytes32String(text);
export const BUILDING_PERMIT = code("BUILDING_PERMIT");
export const TRADE_LICENSE = code("TRADE_LICENSE");
export const sha = (text: string) => ethers.sha256(ethers.toUtf8Bytes(text));
export const uuid = (n: number) => ethers.zeroPadValue(ethers.toBeHex(n), 16);

export interface StageSpec {
  executionType?: number;
  completion?: number;
  threshold?: number;
  onTimeout?: number;
  onRejection?: number;
  timeoutSeconds?: number;
  mandatoryMask?: number;
  departments: string[];
}

/** Full StageInput tuple from a short spec (defaults: SEQUENTIAL, ALL, no timeout, FAIL_REQUEST). */
export function stage(spec: StageSpec) {
  return {
    executionType: spec.executionType ?? Execution.Sequential,
    completion: spec.completion ?? Completion.All,
    threshold: spec.threshold ?? 0,
    onTimeout: spec.onTimeout ?? OnTimeout.None,
    onRejection: spec.onRejection ?? OnRejection.FailRequest,
    timeoutSeconds: spec.timeoutSeconds ?? 0,
    mandatoryMask: spec.mandatoryMask ?? 0,
    departments: spec.departments.map(code),
  };
}

export const VALIDITY_SECONDS = 365n * 24n * 3600n;

/** A salted commitment to an applicant's identity, as the API records it at mint. */
export const COMMITMENT = ethers.id("applicant-commitment");

/**
 * The versions a department has in front of it now: the document registry's packed word for `tokenId` (15 bits of
 * latest version per document index from bit 16), which approve / reject / requestChanges take as
 * `reviewedVersions`.
 */
export async function latestVersions(registry: { documentRegistry(): Promise<string> }, tokenId: bigint) {
  const documents = await ethers.getContractAt("DocumentRegistry", await registry.documentRegistry());
  return documents.packedDocumentsOf(tokenId);
}

/** `versions` with document `docIndex` at `version` (the packed layout of packedDocumentsOf). */
export function withVersion(versions: bigint, docIndex: number, version: bigint) {
  const shift = BigInt(16 + 15 * docIndex);
  return (versions & ~(0x7fffn << shift)) | (version << shift);
}

/**
 * The contracts wired as in production: the approval registry is set once on the token and the document
 * registry, and checks signed decisions through the decision verifier; `deployer` holds DEFAULT_ADMIN_ROLE,
 * `operator` OPERATOR_ROLE on all three, `admin` ADMIN_ROLE, `keeper` KEEPER_ROLE (four different keys).
 * Departments A..F are registered with their own wallets, custodial; wallet changes wait WALLET_DELAY.
 */
export async function deployPlatform() {
  const signers = await ethers.getSigners();
  const [deployer, admin, operator, keeper, applicant, stranger] = signers;
  const departmentWallets = signers.slice(6, 12);

  const token = await ethers.deployContract("LicenceToken", [
    "Licence",
    "LIC",
    "https://verify.example/",
    deployer.address,
  ]);
  const documents = await ethers.deployContract("DocumentRegistry", [await token.getAddress(), deployer.address]);
  const verifier = await ethers.deployContract("DecisionVerifier");
  const registry = await ethers.deployContract("ApprovalRegistry", [
    await token.getAddress(),
    await documents.getAddress(),
    await verifier.getAddress(),
    deployer.address,
    WALLET_DELAY,
  ]);
  const registryAddress = await registry.getAddress();
  await token.setApprovalRegistry(registryAddress);
  await documents.setReviewRegistry(registryAddress);
  for (const c of [token, documents, registry]) await c.grantRole(ROLES.OPERATOR, operator.address);
  for (const c of [token, registry]) await c.grantRole(ROLES.ADMIN, admin.address);
  await registry.grantRole(ROLES.KEEPER, keeper.address);

  const departments: Record<string, (typeof signers)[number]> = {};
  for (const [i, name] of ["A", "B", "C", "D", "E", "F"].entries()) {
    departments[name] = departmentWallets[i];
    await registry.connect(admin).registerDepartment(code(name), departmentWallets[i].address, Custody.Custodial);
  }
  return {
    token,
    documents,
    verifier,
    registry,
    deployer,
    admin,
    operator,
    keeper,
    applicant,
    stranger,
    departments,
    signers,
  };
}

/** The reference workflow: stage 1 SEQUENTIAL [A, B], stage 2 PARALLEL [C, D], both ALL. */
export const REFERENCE_STAGES = [
  stage({ executionType: Execution.Sequential, departments: ["A", "B"] }),
  stage({ executionType: Execution.Parallel, departments: ["C", "D"] }),
];

/** Platform with the reference BUILDING_PERMIT workflow registered (workflow id 1). */
export async function deployWithReferenceWorkflow() {
  const platform = await deployPlatform();
  await platform.registry
    .connect(platform.admin)
    .registerWorkflow(BUILDING_PERMIT, ethers.id("reference-definition"), VALIDITY_SECONDS, REFERENCE_STAGES);
  return platform;
}

/** Reference platform plus token 1 minted, three documents anchored (indexes 0..2) and submitted. */
export async function deploySubmittedRequest() {
  const platform = await deployWithReferenceWorkflow();
  const { token, documents, registry, operator, applicant } = platform;
  await token.connect(operator).mint(applicant.address, 1n, BUILDING_PERMIT, COMMITMENT);
  for (let i = 0; i < 3; i++) {
    await documents.connect(operator).anchorDocument(1n, uuid(i + 1), code(`DOC_${i}`), sha(`doc-${i}-v1`));
  }
  await registry.connect(operator).submit(1n);
  return platform;
}

/** Block timestamp of the block that mined `tx`. */
export async function timestampOf(tx: Promise<{ wait(): Promise<unknown> }> | { wait(): Promise<unknown> }) {
  const receipt = (await (await tx).wait()) as { blockNumber: number };
  return BigInt((await ethers.provider.getBlock(receipt.blockNumber))!.timestamp);
}

/**
 * Platform with a BUILDING_PERMIT workflow made of `stages` (workflow id 1) and token 1 minted with three
 * documents (indexes 0..2, hashes `sha("doc-<i>-v1")`) and submitted, as in `deploySubmittedRequest`.
 */
export async function deploySubmittedRequestWith(
  stages: ReturnType<typeof stage>[],
  validitySeconds: bigint = VALIDITY_SECONDS,
) {
  const platform = await deployPlatform();
  const { token, documents, registry, admin, operator, applicant } = platform;
  await registry
    .connect(admin)
    .registerWorkflow(BUILDING_PERMIT, ethers.id("custom-definition"), validitySeconds, stages);
  await token.connect(operator).mint(applicant.address, 1n, BUILDING_PERMIT, COMMITMENT);
  for (let i = 0; i < 3; i++) {
    await documents.connect(operator).anchorDocument(1n, uuid(i + 1), code(`DOC_${i}`), sha(`doc-${i}-v1`));
  }
  await registry.connect(operator).submit(1n);
  return platform;
}
