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
  DECISION_TYPES,
  DEPARTMENT_KEY_TYPES,
  ROLES as GENERATED_ROLES,
} from "../../../abis/index.ts";
import type { ContractRunner, ContractTransactionResponse } from "ethers";
import type { ApprovalRegistry } from "../../../types/ethers-contracts/index.ts";

/** One in-process chain for the contract tests (snapshotted per test by loadFixture). */
export const connection = await network.create();
export const { ethers, networkHelpers } = connection;
export const { loadFixture } = networkHelpers;

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

type Signer = Awaited<ReturnType<typeof ethers.getSigners>>[number];
type TypedDataSigner = { signTypedData: Signer["signTypedData"] };

/** The registry's EIP-712 domain, as wallets discover it (EIP-5267 eip712Domain()). */
export async function domainOf(registry: { eip712Domain(): Promise<unknown[]> }) {
  const [, name, version, chainId, verifyingContract, salt] = (await registry.eip712Domain()) as [
    string,
    string,
    string,
    bigint,
    string,
    string,
  ];
  return { name, version, chainId, verifyingContract, salt };
}

/** `wallet`'s proof that it holds its key: its signature of DepartmentKey(code, wallet, custody) in the registry's domain. */
export async function keyProof(
  registry: { eip712Domain(): Promise<unknown[]> },
  signer: TypedDataSigner,
  departmentCode: string,
  wallet: string,
  custody: bigint | number,
) {
  return signer.signTypedData(await domainOf(registry), DEPARTMENT_KEY_TYPES, {
    code: departmentCode,
    wallet,
    custody,
  });
}

/** The SHA-256 of every version of every document of `tokenId`, by document index then version (from the events). */
export async function anchoredHashes(documentsAddress: string, tokenId: bigint) {
  const documents = await ethers.getContractAt("DocumentRegistry", documentsAddress);
  const byIndex = new Map<number, Map<number, string>>();
  for (const log of await documents.queryFilter(documents.filters.DocumentAnchored(tokenId))) {
    const { docIndex, version, sha256Hash } = log.args;
    const versions = byIndex.get(Number(docIndex)) ?? new Map<number, string>();
    versions.set(Number(version), sha256Hash);
    byIndex.set(Number(docIndex), versions);
  }
  return byIndex;
}

export interface DecisionFields {
  tokenId: bigint;
  departmentId: bigint | number;
  stage: bigint | number;
  round: bigint | number;
  decision: bigint | number;
  reasonCode: bigint | number;
  reviewedMask: bigint | number;
  documents: string[];
  remarksHash: string;
  nonce: bigint | number;
  deadline: bigint | number;
}

/**
 * The decision a department has in front of it now: the request's current stage and round, the latest hashes of
 * the documents of `reviewedMask` (every document when 0), the department's next nonce and a deadline an hour
 * ahead; `overrides` changes any field.
 */
export async function decisionFor(
  registry: ApprovalRegistry,
  departmentId: bigint | number,
  tokenId: bigint,
  fields: Partial<DecisionFields> & { decision: bigint | number },
): Promise<DecisionFields> {
  const progress = await registry.progressOf(tokenId);
  const documentsAddress = await registry.documentRegistry();
  const documents = await ethers.getContractAt("DocumentRegistry", documentsAddress);
  const [, count, latest] = await documents.documentsOf(tokenId);
  const mask = Number(fields.reviewedMask ?? 0);
  const hashes = await anchoredHashes(documentsAddress, tokenId);
  const covered = [...Array(Number(count)).keys()].filter((i) => mask === 0 || (mask >> i) & 1);
  // An unknown department (the tests that expect DepartmentUnknownId) has no nonce: 0.
  const nonce = await registry.departmentRecord(departmentId).then(
    (record) => record.nonce,
    () => 0n,
  );
  const now = BigInt((await ethers.provider.getBlock("latest"))!.timestamp);
  return {
    tokenId,
    departmentId,
    stage: progress.stage,
    round: progress.stageStartedAt,
    reasonCode: 0,
    reviewedMask: mask,
    documents: covered.map((i) => hashes.get(i)!.get(Number(latest[i]))!),
    remarksHash: ethers.ZeroHash,
    nonce,
    deadline: now + 3600n,
    ...fields,
  };
}

/** A department wallet's signature of `decision` in the registry's domain. */
export async function signDecision(registry: ApprovalRegistry, signer: TypedDataSigner, decision: DecisionFields) {
  return signer.signTypedData(await domainOf(registry), DECISION_TYPES, decision);
}

/** The department whose current wallet is `wallet` (0 when none). */
export async function departmentIdOf(registry: ApprovalRegistry, wallet: string): Promise<bigint> {
  for (let id = 1n; ; id++) {
    let record;
    try {
      record = await registry.departmentRecord(id);
    } catch {
      return 0n;
    }
    if (record.wallet.toLowerCase() === wallet.toLowerCase()) return id;
  }
}

/**
 * `versions` (the packed layout of packedDocumentsOf) as the hashes a decision names: for each covered document,
 * the hash anchored at that version; a version never anchored names a hash no document has.
 */
async function hashesAtVersions(registry: ApprovalRegistry, tokenId: bigint, mask: number, versions: bigint) {
  const documentsAddress = await registry.documentRegistry();
  const documents = await ethers.getContractAt("DocumentRegistry", documentsAddress);
  const [, count] = await documents.documentsOf(tokenId);
  const hashes = await anchoredHashes(documentsAddress, tokenId);
  const covered = [...Array(Number(count)).keys()].filter((i) => mask === 0 || (mask >> i) & 1);
  return covered.map((i) => {
    const version = Number((versions >> BigInt(16 + 15 * i)) & 0x7fffn);
    return hashes.get(i)?.get(version) ?? ethers.id(`never anchored: document ${i} version ${version}`);
  });
}

type Overrides = { gasLimit?: bigint };
type Tx = Promise<ContractTransactionResponse>;
type Num = bigint | number;

/** What `withDecisionShortcuts` adds to the registry (see there). */
interface DecisionShortcuts {
  approve(tokenId: Num, mask: Num, versions: Num, remarks: string, overrides?: Overrides): Tx;
  reject(tokenId: Num, reason: Num, mask: Num, versions: Num, remarks: string, overrides?: Overrides): Tx;
  requestChanges(tokenId: Num, mask: Num, versions: Num, remarks: string, overrides?: Overrides): Tx;
  registerDepartment: ApprovalRegistry["registerDepartment"] & ((code: string, wallet: string, custody: Num) => Tx);
  proposeDepartmentWallet: ApprovalRegistry["proposeDepartmentWallet"] &
    ((code: string, wallet: string, custody: Num) => Tx);
  connect(runner: ContractRunner | null): ReviewRegistry;
}
export type ReviewRegistry = Omit<ApprovalRegistry, keyof DecisionShortcuts> & DecisionShortcuts;

/**
 * The registry as the review tests drive it: `approve(tokenId, mask, versions, remarks)`, `reject(tokenId, reason,
 * mask, versions, remarks)` and `requestChanges(tokenId, mask, versions, remarks)` from a department's wallet
 * become `decide(Decision)` with the current stage, round and nonce and, for the documents of `mask`, the hashes
 * anchored at the versions the test names (so naming an older version names that version's hash); everything
 * else is the registry itself.
 */
export function withDecisionShortcuts(registry: ApprovalRegistry): ReviewRegistry {
  const shortcuts = (connected: ApprovalRegistry, sender: () => Promise<string>) => {
    const send = async (
      tokenId: Num,
      decision: bigint,
      reasonCode: Num,
      mask: Num,
      versions: Num,
      remarksHash: string,
      overrides: Overrides = {},
    ) => {
      const departmentId = await departmentIdOf(registry, await sender());
      const fields = await decisionFor(registry, departmentId, BigInt(tokenId), {
        decision,
        reasonCode,
        reviewedMask: mask,
        remarksHash,
      });
      fields.documents = await hashesAtVersions(registry, BigInt(tokenId), Number(mask), BigInt(versions));
      return connected.decide(fields, overrides);
    };
    // Registering a wallet without a proof: the wallet (a local signer) proves its key, so the tests that are not
    // about proofs read as before; a wallet with no local key gets an empty proof.
    const withProof =
      (method: "registerDepartment" | "proposeDepartmentWallet") =>
      async (departmentCode: string, wallet: string, custody: bigint | number, ...rest: unknown[]) => {
        const call = connected[method] as unknown as (...args: unknown[]) => Promise<unknown>;
        if (typeof rest[0] === "string") return call(departmentCode, wallet, custody, ...rest);
        const local = (await ethers.getSigners()).find((s) => s.address.toLowerCase() === wallet.toLowerCase());
        const proof = local ? await keyProof(registry, local, departmentCode, wallet, custody) : "0x";
        return call(departmentCode, wallet, custody, proof, ...rest);
      };
    return {
      registerDepartment: Object.assign(withProof("registerDepartment"), {
        staticCall: connected.registerDepartment.staticCall,
      }),
      proposeDepartmentWallet: withProof("proposeDepartmentWallet"),
      approve: (t: Num, m: Num, v: Num, r: string, o?: Overrides) => send(t, Decision.Approved, 0, m, v, r, o),
      reject: (t: Num, reason: Num, m: Num, v: Num, r: string, o?: Overrides) =>
        send(t, Decision.Rejected, reason, m, v, r, o),
      requestChanges: (t: Num, m: Num, v: Num, r: string, o?: Overrides) =>
        send(t, Decision.ChangesRequested, 0, m, v, r, o),
    };
  };
  const wrap = (target: ApprovalRegistry, sender: () => Promise<string>): ReviewRegistry =>
    new Proxy(target as unknown as ReviewRegistry, {
      get(object, property, receiver): unknown {
        if (property === "connect") {
          return (signer: Signer) =>
            wrap(target.connect(signer) as ApprovalRegistry, () => Promise.resolve(signer.address));
        }
        const own = shortcuts(target, sender) as Record<PropertyKey, unknown>;
        if (property in own) return own[property];
        return Reflect.get(object, property, receiver);
      },
    });
  return wrap(registry, async () => (await ethers.getSigners())[0].address);
}

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
  const extension = await ethers.deployContract("RegistryExtension");
  const deployed = await ethers.deployContract("ApprovalRegistry", [
    await token.getAddress(),
    await documents.getAddress(),
    await verifier.getAddress(),
    await extension.getAddress(),
    deployer.address,
    WALLET_DELAY,
  ]);
  const registryAddress = await deployed.getAddress();
  await token.setApprovalRegistry(registryAddress);
  await documents.setReviewRegistry(registryAddress);
  for (const c of [token, documents, deployed]) await c.grantRole(ROLES.OPERATOR, operator.address);
  for (const c of [token, deployed]) await c.grantRole(ROLES.ADMIN, admin.address);
  await deployed.grantRole(ROLES.KEEPER, keeper.address);
  // `admin` also governs the registry here (registers departments, wallet changes and workflows), so the review
  // tests read as one administration; the governance tests use keys that hold one role each.
  await deployed.grantRole(ROLES.DEFAULT_ADMIN, admin.address);
  const registry = withDecisionShortcuts(deployed as unknown as ApprovalRegistry);

  const departments: Record<string, (typeof signers)[number]> = {};
  for (const [i, name] of ["A", "B", "C", "D", "E", "F"].entries()) {
    departments[name] = departmentWallets[i];
    const wallet = departmentWallets[i];
    await registry
      .connect(admin)
      .registerDepartment(
        code(name),
        wallet.address,
        Custody.Custodial,
        await keyProof(registry, wallet, code(name), wallet.address, Custody.Custodial),
      );
  }
  return {
    token,
    documents,
    verifier,
    extension,
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
