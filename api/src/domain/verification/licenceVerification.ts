/**
 * Verifying a licence by token id. Whether it is valid comes from the chain itself (LicenceToken.validityOf, the
 * owner, and the standing decisions in ApprovalRegistry.decisionsOf): the index can lag or be wrong, the contracts
 * cannot. Names, numbers and transaction hashes come from the index and the API's rows.
 */
import { LRUCache } from "lru-cache";
import type { ChainGateway } from "../../chain/chainGateway.ts";
import {
  ApprovalRegistryDecisionStatus,
  ApprovalRegistryPhase,
  DepartmentPasskeyAccountAbi,
  stageNumber,
} from "../../../../abis/index.ts";
import {
  decisionsOf,
  ownerOf,
  progressOf,
  readContract,
  validityOf,
  type ContractCaller,
} from "../../chain/contractReads.ts";
import { LICENCE_STATUS_NAMES } from "../../chain/contracts.ts";
import type { Deployment } from "../../chain/deployment.ts";
import type { Rows } from "../../db/readTogether.ts";
import type { DbPool } from "../../db/queryable.ts";
import { AppError } from "../errors.ts";
import type { DomainContext } from "../context.ts";
import { departmentCodes } from "../../reads/requestReads.ts";
import { licenceRecord, type LicenceRecord } from "../../reads/verificationReads.ts";
import { dateFromUnixSeconds, isoFromUnixSeconds } from "../../encoding/unixTime.ts";
import { licenceMessage, VERDICT_OF_VALIDITY, type LicenceVerdict } from "./verdicts.ts";

export interface VerificationDependencies {
  pool: DbPool;
  gateway: Pick<ChainGateway, "call">;
  contracts: Deployment["contracts"];
  chainId: number;
  chainState?: DomainContext["chainState"];
  /** Verdicts by token id, with the chain state they were read at and until when they hold (an expiry). */
  verdicts?: LRUCache<bigint, { state: string; until: number; verification: LicenceVerification }>;
}

/** What verification needs of the API's context: reads, the chain's view calls, the deployment. */
export function verificationDependencies(
  context: Pick<DomainContext, "pool" | "gateway" | "contracts" | "config" | "chainState">,
): VerificationDependencies {
  return {
    pool: context.pool,
    gateway: context.gateway,
    contracts: context.contracts,
    chainId: context.config.chainId,
    chainState: context.chainState,
    verdicts: new LRUCache({ max: 10_000 }),
  };
}

export const SIGNED_BY = ["PLATFORM", "DEPARTMENT_KEY", "DEPARTMENT_REVIEWERS"] as const;
export type SignedBy = (typeof SIGNED_BY)[number];

export interface LicenceVerification {
  isValid: boolean;
  verdict: LicenceVerdict;
  message: string;
  tokenId: number;
  requestNumber: string | null;
  requestType: string | null;
  status: string;
  applicantName: string | null;
  issuedAt: string | null;
  expiresAt: string | null;
  approvals: {
    departmentCode: string;
    departmentName: string;
    stage: number;
    approvedAt: string;
    transactionHash: string;
    /** The department wallet that signed (the decision's sender, or the EIP-712 signer of a relayed decision). */
    signer: string | null;
    /**
     * Who could sign: PLATFORM (a custodial key the platform holds), DEPARTMENT_KEY (a key or Safe the department
     * holds), DEPARTMENT_REVIEWERS (the department's passkey account: `reviewerThreshold` of its reviewers' passkeys).
     */
    signedBy: SignedBy | null;
    reviewerThreshold: number | null;
  }[];
  blockchainProof: {
    chainId: number;
    contractAddress: string;
    tokenId: number;
    ownerAddress: string;
    transactionHash: string | null;
    mintTransactionHash: string | null;
  } | null;
  checkedAt: string;
}

/** Verdicts of a licence that was issued: only these show who holds it and what it is (token ids are sequential). */
export const ISSUED_VERDICTS: ReadonlySet<LicenceVerdict> = new Set(["VALID", "EXPIRED", "SUSPENDED", "REVOKED"]);

export const unknownLicence = () => new AppError(404, "NOT_FOUND", licenceMessage("UNKNOWN"), { verdict: "UNKNOWN" });

/**
 * The verdict, reused while the chain's head and the index stay where they were when it was read (and, for a
 * licence that expires, until it does): every QR scan of an unchanged licence costs no contract call.
 */
export async function verifyLicence(deps: VerificationDependencies, tokenId: bigint): Promise<LicenceVerification> {
  const state = await deps.chainState?.(); // before reading: what changes meanwhile moves the key
  const cached = state === undefined ? undefined : deps.verdicts?.get(tokenId);
  const checkedAt = new Date();
  if (cached && cached.state === state && checkedAt.getTime() < cached.until) {
    return { ...cached.verification, checkedAt: checkedAt.toISOString() };
  }
  const verification = await readVerdict(deps, tokenId);
  if (state !== undefined) {
    const until = verification.expiresAt ? Date.parse(verification.expiresAt) : Infinity;
    deps.verdicts?.set(tokenId, { state, until, verification });
  }
  return verification;
}

async function readVerdict(deps: VerificationDependencies, tokenId: bigint): Promise<LicenceVerification> {
  const { gateway, contracts, pool } = deps;
  // One round of chain calls and reads together; then the decisions of each stage reached.
  const [[validity, statusCode, , expiresAtSeconds], owner, progress, rows] = await Promise.all([
    validityOf(gateway, contracts.LicenceToken, tokenId),
    ownerOf(gateway, contracts.LicenceToken, tokenId).catch(() => null), // reverts for an unknown token
    progressOf(gateway, contracts.ApprovalRegistry, tokenId),
    licenceRecord(pool, tokenId),
  ]);
  const verdict = VERDICT_OF_VALIDITY[validity];
  if (verdict === "UNKNOWN") throw unknownLicence();
  if (!ISSUED_VERDICTS.has(verdict)) return notIssued(verdict, tokenId, LICENCE_STATUS_NAMES[Number(statusCode)]);
  const standing = await standingApprovals(deps, tokenId, progress);
  const approvals = await approvalsShown(
    pool,
    standing,
    rows.decisions,
    await passkeyThresholds(gateway, rows.decisions),
  );
  const status = verdict === "EXPIRED" ? "EXPIRED" : LICENCE_STATUS_NAMES[Number(statusCode)];
  return issuedLicence(deps, tokenId, { verdict, status, expiresAtSeconds, owner: owner as string, rows, approvals });
}

type Approval = LicenceVerification["approvals"][number];

/** The approvals standing on chain now, stage by stage (decisions invalidated by a new document version are gone). */
async function standingApprovals(
  { gateway, contracts }: VerificationDependencies,
  tokenId: bigint,
  progress: Awaited<ReturnType<typeof progressOf>>,
): Promise<{ departmentId: number; stage: number }[]> {
  if (progress.phase === ApprovalRegistryPhase.NotStarted) return [];
  const stages = await Promise.all(
    Array.from({ length: progress.maxStage + 1 }, (_, stage) =>
      decisionsOf(gateway, contracts.ApprovalRegistry, tokenId, stage),
    ),
  );
  return stages.flatMap(([ids, statuses], stage) =>
    ids.flatMap((id, i) =>
      statuses[i] === ApprovalRegistryDecisionStatus.Approved ? [{ departmentId: id, stage }] : [],
    ),
  );
}

/** Each standing approval with its department and transaction from the index, in the order they were given. */
async function approvalsShown(
  pool: DbPool,
  standing: { departmentId: number; stage: number }[],
  decisions: Rows,
  thresholds: Map<string, number>,
): Promise<Approval[]> {
  const decisionOf = new Map(decisions.map((r) => [`${r.stage}:${r.department_id}`, r]));
  const missing = standing
    .filter(({ departmentId, stage }) => !decisionOf.get(`${stage}:${departmentId}`)?.code)
    .map((a) => a.departmentId);
  const codes = await departmentCodes(pool, missing); // only when the index lags behind the chain
  return standing
    .map(({ departmentId, stage }) => {
      const decision = decisionOf.get(`${stage}:${departmentId}`);
      const code = decision?.code ?? codes.get(departmentId) ?? String(departmentId);
      return {
        departmentCode: code,
        departmentName: decision?.name ?? code,
        stage: stageNumber(stage),
        approvedAt: decision ? isoFromUnixSeconds(decision.timestamp) : "",
        transactionHash: decision?.tx_hash ?? "",
        signer: decision?.signer ?? null,
        signedBy: !decision
          ? null
          : decision.custody === "CUSTODIAL"
            ? "PLATFORM"
            : thresholds.has(decision.signer)
              ? "DEPARTMENT_REVIEWERS"
              : "DEPARTMENT_KEY",
        reviewerThreshold: decision ? (thresholds.get(decision.signer) ?? null) : null,
      } satisfies Approval;
    })
    .sort((a, b) => a.approvedAt.localeCompare(b.approvedAt) || a.stage - b.stage);
}

/**
 * The threshold of each department-held signer that answers as a DepartmentPasskeyAccount (asked of the chain, so a
 * passkey account a department deployed itself is recognised too); an EOA or a Safe does not answer threshold().
 */
async function passkeyThresholds(caller: ContractCaller, decisions: Rows): Promise<Map<string, number>> {
  const held = [...new Set(decisions.filter((d) => d.custody !== "CUSTODIAL").map((d) => d.signer as string))];
  const answers = await Promise.all(
    held.map((signer) =>
      readContract(caller, signer, DepartmentPasskeyAccountAbi, "threshold", []).then(
        (threshold) => [signer, Number(threshold)] as const,
        () => null,
      ),
    ),
  );
  return new Map(answers.filter((answer) => answer !== null));
}

/** An issued licence: who holds it, what it is, and where the chain proves it. */
function issuedLicence(
  deps: VerificationDependencies,
  tokenId: bigint,
  found: {
    verdict: LicenceVerdict;
    status: string;
    expiresAtSeconds: number | bigint;
    owner: string;
    rows: LicenceRecord;
    approvals: Approval[];
  },
): LicenceVerification {
  const { verdict, status, rows, approvals } = found;
  const row = rows.request[0];
  const issuedAtSeconds = rows.licence[0]?.issued_at;
  const issuedAt = issuedAtSeconds ? dateFromUnixSeconds(issuedAtSeconds) : null;
  const expiresAt = Number(found.expiresAtSeconds) > 0 ? dateFromUnixSeconds(found.expiresAtSeconds) : null;
  const mintTx = rows.licence[0]?.created_tx ?? null;
  return {
    isValid: verdict === "VALID",
    verdict,
    message: licenceMessage(verdict, { issuedAt, expiresAt, status }),
    tokenId: Number(tokenId),
    requestNumber: row?.request_number ?? null,
    requestType: row?.request_type ?? null,
    status,
    applicantName: row?.applicant_name ?? null, // never the identity-locker id
    issuedAt: issuedAt?.toISOString() ?? null,
    expiresAt: expiresAt?.toISOString() ?? null,
    approvals,
    blockchainProof: {
      chainId: deps.chainId,
      contractAddress: deps.contracts.LicenceToken,
      tokenId: Number(tokenId),
      // ownerOf reverts only for a token that does not exist, which validityOf already answered with UNKNOWN.
      ownerAddress: found.owner,
      transactionHash: rows.issuance[0]?.tx_hash ?? mintTx,
      mintTransactionHash: mintTx,
    },
    checkedAt: new Date().toISOString(),
  };
}

/**
 * A token that is not an issued licence (a draft, a request under review, cancelled or rejected): the verdict and the
 * status only. Who applied, for what, and the owner address stay private; anyone can enumerate token ids. The
 * address is the licence's own (derived from the request and the applicant), but licences minted before it are owned
 * by their applicant's one address, which would link one person's requests.
 */
function notIssued(verdict: LicenceVerdict, tokenId: bigint, status: string): LicenceVerification {
  return { ...unnamedLicence(verdict, licenceMessage(verdict, { status })), tokenId: Number(tokenId), status };
}

/**
 * A verdict that shows no licence: no token, request, applicant, dates, approvals or chain proof (a code or a
 * credential that fails its checks; tokenId and status are set by a caller that may show them).
 */
export function unnamedLicence(verdict: LicenceVerdict, message: string) {
  return {
    isValid: false as const,
    verdict,
    message,
    tokenId: null,
    requestNumber: null,
    requestType: null,
    status: null,
    applicantName: null,
    issuedAt: null,
    expiresAt: null,
    approvals: [],
    blockchainProof: null,
    checkedAt: new Date().toISOString(),
  };
}
