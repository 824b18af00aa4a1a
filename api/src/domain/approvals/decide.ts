/**
 * Department decisions: approve, reject, request changes. A custodial department's decision is `decide(Decision)`
 * sent from its own wallet (the platform holds the key); a department that holds its own key signs the EIP-712
 * Decision (decisionToSign gives the typed data) and the operator relays it (decideBySig). Either way the decision
 * names the stage and round it was made in, the SHA-256 of each document version reviewed, the department's next
 * decision nonce and a deadline, and the approval registry checks them all on chain, with the department's turn and
 * the pinned workflow's rules. The remarks stay off chain; their keccak256 is on chain. A refused decision records
 * nothing anywhere.
 */
import { id } from "ethers";
import type { Hex } from "../../../../abis/index.ts";
import type { Principal } from "../../auth/principal.ts";
import { audited, type RequestMeta } from "../../stores/auditLog.ts";
import { ContractRevertError } from "../../chain/chainErrors.ts";
import { SameWriteInFlight, type ConfirmedTx, type SendOptions } from "../../chain/chainGateway.ts";
import { approvalRegistryArgs, approvalRegistryCall, hexBytes } from "../../chain/contractCalls.ts";
import { pendingCallsOf } from "../../reads/outboxReads.ts";
import { DECISION_NAMES, enumValueOf } from "../../chain/contracts.ts";
import { departmentRecord, progressOf } from "../../chain/contractReads.ts";
import { apiErrorOf, REVERT_ANSWERS } from "../revertMapping.ts";
import { canonicalJson } from "../../encoding/canonicalJson.ts";
import { AppError, conflict, forbidden } from "../errors.ts";
import { anchoredDocumentsOf, type AnchoredDocument } from "../../reads/anchoredDocuments.ts";
import { departmentOnChain, type DepartmentOnChain } from "../../reads/departmentReads.ts";
import { findVisibleRequest } from "../access.ts";
import { insertDecisionRemarks } from "../../stores/decisionRemarks.ts";
import type { DomainContext } from "../context.ts";
import { decisionAnswer } from "./decisionAnswer.ts";
import { decisionTypedData, registryDomain, type DecisionMessage } from "./decisionTypedData.ts";

export const REJECTION_REASONS = [
  "SAFETY_VIOLATION",
  "INCOMPLETE_DOCUMENTS",
  "POLICY_VIOLATION",
  "FRAUDULENT_APPLICATION",
  "OTHER",
] as const;
export type RejectionReason = (typeof REJECTION_REASONS)[number];

/** A department's signature of the decision's typed data (department-held keys). */
export interface DecisionSignature {
  signature: string;
  nonce: string;
  deadline: number;
  /** The stage and round of the typed data signed (default: the request's current ones). */
  stage?: number;
  round?: number;
}

interface Reviewed {
  reviewedDocuments?: string[];
  /** The version of each named document the department reviewed (default: the latest when the call arrives). */
  documentVersions?: Record<string, number>;
}

export type Decision = Reviewed &
  (
    | { kind: "APPROVED"; remarks: string }
    | { kind: "REJECTED"; remarks: string; reason: RejectionReason }
    | { kind: "CHANGES_REQUESTED"; remarks: string; requiredDocuments?: string[] }
  );

/** IApprovalRegistry.DecisionStatus value of a decision (abis/enums.ts). */
const decisionStatus = (kind: Decision["kind"]) => enumValueOf(DECISION_NAMES, kind);
/** How long a typed decision handed out for signing stays valid on chain. */
const SIGNATURE_LIFETIME_SECONDS = 15 * 60;
/** How long a custodial decision may wait to be mined (the chain accepts at most a day). */
const CUSTODIAL_LIFETIME_SECONDS = 5 * 60;
/** A custodial decision whose nonce was lost (an earlier decision in flight reverted) is sent again. */
const NONCE_ATTEMPTS = 4;
const DECISION_KINDS = ["APPROVAL", "REJECT", "CHANGES_REQUESTED"] as const;

/** Chain refusals, in the API's words (revertMapping.ts); a stale document is named by its id and hash. */
function explain(error: ContractRevertError, documents: AnchoredDocument[]): AppError {
  return apiErrorOf(error, {
    ReviewStaleDocuments: (stale) => {
      const [, index, reviewed] = stale.args as [bigint, bigint, string];
      const document = documents.find((d) => d.docIndex === Number(index));
      const reviewedVersion = [...(document?.hashes ?? [])].find(([, hash]) => hash === reviewed)?.[0] ?? null;
      return conflict("STALE_DOCUMENTS", REVERT_ANSWERS.ReviewStaleDocuments.message, {
        changedDocuments: [
          {
            documentId: document?.documentId ?? null,
            reviewedHash: /^0x0{64}$/.test(reviewed) ? null : reviewed,
            reviewedVersion,
            latestVersion: document?.latestVersion ?? null,
          },
        ],
      });
    },
  });
}

/** The caller's department as the chain has it: a department not registered on chain cannot decide. */
async function callerDepartment(context: DomainContext, code: string): Promise<DepartmentOnChain> {
  const department = await departmentOnChain(context.pool, code);
  if (!department) throw forbidden("Your department is not registered on chain");
  return department;
}

/**
 * The documents a decision covers, as the chain checks them: the bit mask of the named documents (0, every
 * document, when none is named) and the SHA-256 of the version reviewed of each covered document, by ascending
 * document index. A document named without a version is taken at its latest version now.
 */
function resolveReview(
  documents: AnchoredDocument[],
  reviewed: Reviewed,
): { mask: number; hashes: Hex[]; covered: Record<string, number> } {
  const named = reviewed.reviewedDocuments ?? [];
  const byId = new Map(documents.map((d) => [d.documentId, d]));
  const unknown = [...named, ...Object.keys(reviewed.documentVersions ?? {})].filter((id) => !byId.has(id));
  if (unknown.length > 0)
    throw new AppError(400, "UNKNOWN_DOCUMENTS", "reviewedDocuments names documents this request does not have", {
      unknownDocuments: [...new Set(unknown)],
    });
  // Naming no document covers them all: then documentVersions may pin any (a signed decision sends back the
  // versions it signed, so that a document updated since is 409 STALE_DOCUMENTS, not a signature mismatch).
  const isCovered = (id: string) => named.length === 0 || named.includes(id);
  const stray = Object.keys(reviewed.documentVersions ?? {}).filter((id) => !isCovered(id));
  if (stray.length > 0)
    throw new AppError(400, "VALIDATION_ERROR", "documentVersions names documents that are not in reviewedDocuments", {
      documents: stray,
    });
  let mask = 0;
  const hashes: Hex[] = [];
  const covered: Record<string, number> = {};
  for (const document of [...documents].sort((a, b) => a.docIndex - b.docIndex)) {
    if (!isCovered(document.documentId)) continue;
    const version = reviewed.documentVersions?.[document.documentId] ?? document.latestVersion;
    const hash = document.hashes.get(version);
    if (!hash)
      throw new AppError(400, "VALIDATION_ERROR", "documentVersions names a version that was never anchored", {
        documentId: document.documentId,
        version,
        latestVersion: document.latestVersion,
      });
    if (named.includes(document.documentId)) mask |= 1 << document.docIndex;
    covered[document.documentId] = version;
    hashes.push(hash);
  }
  return { mask, hashes, covered };
}

type Review = ReturnType<typeof resolveReview>;

function remarksOf(decision: Decision) {
  const record = {
    remarks: decision.remarks,
    ...(decision.kind === "REJECTED" ? { reason: decision.reason } : {}),
    ...(decision.kind === "CHANGES_REQUESTED" ? { requiredDocuments: decision.requiredDocuments ?? [] } : {}),
  };
  return { record, hash: id(canonicalJson(record)) as Hex };
}

const reasonCodeOf = (decision: Decision) =>
  decision.kind === "REJECTED" ? REJECTION_REASONS.indexOf(decision.reason) + 1 : 0;

/** Where the request's review stands on chain now: the stage and its round (the stage's start time). */
async function currentRound(context: DomainContext, tokenId: bigint): Promise<{ stage: number; round: number }> {
  const progress = await progressOf(context.gateway, context.contracts.ApprovalRegistry, tokenId, "latest");
  return { stage: Number(progress.stage), round: Number(progress.stageStartedAt) };
}

/** A deadline `seconds` ahead of the later of the chain's clock and ours (a test chain's clock may run ahead). */
async function deadlineIn(context: DomainContext, seconds: number): Promise<bigint> {
  const chainNow = await context.gateway.latestBlockTime();
  return BigInt(Math.max(chainNow, Math.floor(Date.now() / 1000)) + seconds);
}

/** The Decision the chain checks: the same fields for the typed data handed out, the relayed call and decide. */
function decisionMessage(
  tokenId: bigint,
  departmentId: number,
  decision: Decision,
  at: { stage: number; round: number },
  review: { mask: number; hashes: Hex[] },
  nonce: bigint,
  deadline: bigint,
): DecisionMessage {
  return {
    tokenId,
    departmentId,
    stage: at.stage,
    round: at.round,
    decision: decisionStatus(decision.kind),
    reasonCode: reasonCodeOf(decision),
    reviewedMask: review.mask,
    documents: review.hashes,
    remarksHash: remarksOf(decision).hash,
    nonce,
    deadline,
  };
}

/**
 * The typed data a department that holds its own key signs for this decision: the request's current stage and
 * round, its documents' hashes resolved now, its department's next nonce (read from the chain) and a deadline 15
 * minutes ahead, in the registry's domain (with the deployment's salt).
 */
export async function decisionToSign(
  context: DomainContext,
  principal: Extract<Principal, { kind: "department" }>,
  requestId: string,
  decision: Decision,
  /** How long the signature may wait (passkey reviewers collecting signatures take longer); at most a day on chain. */
  lifetimeSeconds = SIGNATURE_LIFETIME_SECONDS,
) {
  const request = await findVisibleRequest(context.pool, principal, requestId);
  const department = await callerDepartment(context, principal.code);
  const review = resolveReview(await anchoredDocumentsOf(context.pool, request.tokenId), decision);
  const record = await departmentRecord(context.gateway, context.contracts.ApprovalRegistry, department.departmentId);
  const at = await currentRound(context, request.tokenId);
  const deadline = await deadlineIn(context, lifetimeSeconds);
  const message = decisionMessage(
    request.tokenId,
    department.departmentId,
    decision,
    at,
    review,
    BigInt(record.nonce),
    deadline,
  );
  return {
    typedData: decisionTypedData(await registryDomain(context), message),
    signer: department.wallet,
    custody: department.custody,
    documentVersions: review.covered,
    stage: at.stage,
    round: at.round,
    nonce: message.nonce.toString(),
    deadline: Number(message.deadline),
  };
}

export async function decide(
  context: DomainContext,
  meta: RequestMeta,
  requestId: string,
  decision: Decision,
  signed?: DecisionSignature,
) {
  const principal = meta.principal as Extract<Principal, { kind: "department" }>;
  // A request not routed to the department does not exist for it, as for its reads: 404 before anything reveals
  // its state (a 409 NOT_PENDING / INVALID_STATE carried the token id and stage) or is simulated on chain.
  const request = await findVisibleRequest(context.pool, principal, requestId);
  const department = await callerDepartment(context, principal.code);
  requireSignatureIfHeld(department, signed);
  const documents = await anchoredDocumentsOf(context.pool, request.tokenId);
  const review = resolveReview(documents, decision);
  const remarks = remarksOf(decision);
  // The decision's off-chain remarks and its audit row, in the outbox record's database transaction.
  const recorded = audited(
    meta,
    {
      entityType: "APPROVAL",
      entityId: request.id,
      action: decision.kind === "APPROVED" ? "APPROVE" : decision.kind === "REJECTED" ? "REJECT" : "REQUEST_CHANGES",
      oldValue: { status: request.status, stage: request.stage },
      newValue: {
        department: principal.code,
        decision: decision.kind,
        ...remarks.record,
        reviewedDocuments: decision.reviewedDocuments ?? [],
        documentVersions: review.covered,
        signedByDepartment: Boolean(signed),
      },
    },
    (client, tx) =>
      insertDecisionRemarks(client, {
        txHash: tx.hash,
        requestId: request.id,
        departmentCode: principal.code,
        decision: decision.kind,
        remarks: decision.remarks,
        remarksHash: remarks.hash,
        reason: decision.kind === "REJECTED" ? decision.reason : null,
        requiredDocuments: decision.kind === "CHANGES_REQUESTED" ? (decision.requiredDocuments ?? []) : null,
        chainTxId: tx.id,
      }),
  );

  const send = async (data: Hex, options: Pick<SendOptions, "dataUnderLock" | "simulateAt"> = {}) => {
    try {
      return await context.gateway.send(
        {
          kind:
            decision.kind === "APPROVED" ? "APPROVAL" : decision.kind === "REJECTED" ? "REJECT" : "CHANGES_REQUESTED",
          // A signed decision is relayed by the operator; the chain checks the department wallet's signature.
          from: signed ? context.operator : department.wallet,
          to: context.contracts.ApprovalRegistry,
          data,
          requestId: request.id,
        },
        { ...recorded, ...options },
      );
    } catch (error) {
      throw error instanceof ContractRevertError ? explain(error, documents) : error;
    }
  };

  let tx: ConfirmedTx;
  if (signed) {
    // The stage and round signed: a signature held back while the review moved on is refused (STALE_DECISION).
    const at =
      signed.stage !== undefined && signed.round !== undefined
        ? { stage: signed.stage, round: signed.round }
        : await currentRound(context, request.tokenId);
    const message = decisionMessage(
      request.tokenId,
      department.departmentId,
      decision,
      at,
      review,
      BigInt(signed.nonce),
      BigInt(signed.deadline),
    );
    tx = await send(approvalRegistryCall("decideBySig", [message, hexBytes(signed.signature)]));
  } else {
    tx = await custodialDecision(context, request.tokenId, department, decision, review, send);
  }
  return decisionAnswer(context, request, decision.kind, tx);
}

/**
 * A custodial department's `decide`, from its wallet: the round read from the chain now. Its decision nonce is
 * taken under the wallet's lock (shared by every API process): the chain's next nonce, or the one after the
 * department's decisions still in flight, so decisions of one department pipeline into one block. One whose nonce
 * is lost anyway (an earlier one in flight reverted) is sent again.
 */
async function custodialDecision(
  context: DomainContext,
  tokenId: bigint,
  department: DepartmentOnChain,
  decision: Decision,
  review: Review,
  send: (data: Hex, options: Pick<SendOptions, "dataUnderLock" | "simulateAt">) => Promise<ConfirmedTx>,
): Promise<ConfirmedTx> {
  const registry = context.contracts.ApprovalRegistry;
  const chainNonce = async (blockTag?: number) =>
    BigInt((await departmentRecord(context.gateway, registry, department.departmentId, blockTag)).nonce);
  for (let attempt = 1; ; attempt++) {
    // Round and nonce of one block, simulated there: decisions of the department mined meanwhile do not fail it.
    const block = await context.gateway.provider.getBlockNumber();
    const [progress, nonce, deadline] = await Promise.all([
      progressOf(context.gateway, registry, tokenId, block),
      chainNonce(block),
      deadlineIn(context, CUSTODIAL_LIFETIME_SECONDS),
    ]);
    const at = { stage: Number(progress.stage), round: Number(progress.stageStartedAt) };
    const call = (nonce: bigint) =>
      approvalRegistryCall("decide", [
        decisionMessage(tokenId, department.departmentId, decision, at, review, nonce, deadline),
      ]);
    const dataUnderLock: SendOptions["dataUnderLock"] = async (client) => {
      // The outbox first, then the chain: a decision mined in between is then counted by both, never by neither.
      let next = 0n;
      for (const pending of await pendingCallsOf(client, department.wallet, DECISION_KINDS)) {
        const [message] = approvalRegistryArgs("decide", pending.data) as unknown as [DecisionMessage];
        if (message.tokenId === tokenId) throw new SameWriteInFlight(pending.hash);
        if (message.nonce >= next) next = message.nonce + 1n;
      }
      const onChain = await chainNonce();
      return call(onChain > next ? onChain : next);
    };
    try {
      return await send(call(nonce), { dataUnderLock, simulateAt: block });
    } catch (error) {
      const lostNonce = error instanceof AppError && error.code === REVERT_ANSWERS.ReviewInvalidNonce.code;
      if (!lostNonce || attempt >= NONCE_ATTEMPTS) throw error;
    }
  }
}

/** A department that holds its own key decides only by signing: without a signature there is nothing to relay. */
function requireSignatureIfHeld(department: DepartmentOnChain, signed: DecisionSignature | undefined): void {
  if (department.custody === "DEPARTMENT_HELD" && !signed) {
    throw new AppError(
      400,
      "SIGNATURE_REQUIRED",
      "Your department holds its own key: sign the typed data from POST /requests/{requestId}/decision-typed-data and send signature, nonce and deadline with the decision",
      { custody: department.custody, wallet: department.wallet },
    );
  }
}
