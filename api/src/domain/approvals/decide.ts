/**
 * Department decisions: approve, reject, request changes. A custodial department's decision is a transaction from
 * its own wallet (the platform holds the key); a department that holds its own key signs the EIP-712 decision
 * (decisionToSign gives the typed data) and the operator relays it (decideBySig). Either way the approval registry
 * checks on chain that the department is required in the current stage (in its turn for SEQUENTIAL stages), that
 * the documents it reviewed are still at the versions it reviewed, and applies the pinned workflow's rules. The
 * remarks stay off chain; their keccak256 is on chain. A refused decision records nothing anywhere.
 */
import { keccak256, stringToBytes } from "viem";
import type { Principal } from "../../auth/principal.ts";
import { audit, type RequestMeta } from "../../audit/auditLog.ts";
import { ContractRevertError } from "../../chain/chainErrors.ts";
import type { ConfirmedTx, RecordedTx } from "../../chain/chainGateway.ts";
import { approvalRegistryCall, hexBytes } from "../../chain/contractCalls.ts";
import { approvalRegistry, DECISION_NAMES, enumValueOf } from "../../chain/contracts.ts";
import { departmentRecord } from "../../chain/contractReads.ts";
import { apiErrorOf, REVERT_ANSWERS } from "../../revertMapping.ts";
import { canonicalJson } from "../../canonicalJson.ts";
import type { Tx } from "../../db/queryable.ts";
import { AppError, conflict, forbidden } from "../../errors.ts";
import { anchoredDocumentsOf, type AnchoredDocument } from "../../reads/anchoredDocuments.ts";
import { departmentOnChain, type DepartmentOnChain } from "../../reads/departmentReads.ts";
import { findVisibleRequest, type RequestView } from "../../reads/requestReads.ts";
import { insertDecisionRemarks } from "../../stores/decisionRemarks.ts";
import type { DomainContext } from "../context.ts";
import { decisionAnswer } from "./decisionAnswer.ts";
import { decisionTypedData, type DecisionMessage } from "./decisionTypedData.ts";

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

/** Chain refusals, in the API's words (revertMapping.ts); a stale document is named by its id. */
function explain(error: ContractRevertError, documents: AnchoredDocument[]): AppError {
  return apiErrorOf(error, {
    ReviewStaleDocuments: (stale) => {
      const [, docIndex, reviewed, latest] = stale.args.map(Number);
      const document = documents.find((d) => d.docIndex === docIndex);
      return conflict("STALE_DOCUMENTS", REVERT_ANSWERS.ReviewStaleDocuments.message, {
        changedDocuments: [
          { documentId: document?.documentId ?? null, reviewedVersion: reviewed, latestVersion: latest },
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
 * document, when none is named) and the versions reviewed in the document registry's packed layout (15 bits per
 * document index from bit 16). A document named without a version is taken at its latest version now.
 */
function resolveReview(
  documents: AnchoredDocument[],
  reviewed: Reviewed,
): { mask: number; versions: bigint; covered: Record<string, number> } {
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
  let versions = 0n;
  const covered: Record<string, number> = {};
  for (const document of documents) {
    const isNamed = named.includes(document.documentId);
    const version =
      (isCovered(document.documentId) ? reviewed.documentVersions?.[document.documentId] : undefined) ??
      document.latestVersion;
    if (isNamed) mask |= 1 << document.docIndex;
    if (isCovered(document.documentId)) covered[document.documentId] = version;
    versions |= BigInt(version) << BigInt(16 + 15 * document.docIndex);
  }
  return { mask, versions, covered };
}

type Review = ReturnType<typeof resolveReview>;
type Remarks = ReturnType<typeof remarksOf>;

function remarksOf(decision: Decision) {
  const record = {
    remarks: decision.remarks,
    ...(decision.kind === "REJECTED" ? { reason: decision.reason } : {}),
    ...(decision.kind === "CHANGES_REQUESTED" ? { requiredDocuments: decision.requiredDocuments ?? [] } : {}),
  };
  return { record, hash: keccak256(stringToBytes(canonicalJson(record))) };
}

const reasonCodeOf = (decision: Decision) =>
  decision.kind === "REJECTED" ? REJECTION_REASONS.indexOf(decision.reason) + 1 : 0;

/** The SignedDecision the chain checks: the same fields for the typed data handed out and for the relayed call. */
function decisionMessage(
  tokenId: bigint,
  departmentId: number,
  decision: Decision,
  review: { mask: number; versions: bigint },
  nonce: bigint,
  deadline: bigint,
): DecisionMessage {
  return {
    tokenId,
    departmentId,
    decision: decisionStatus(decision.kind),
    reasonCode: reasonCodeOf(decision),
    reviewedMask: review.mask,
    reviewedVersions: review.versions,
    remarksHash: remarksOf(decision).hash,
    nonce,
    deadline,
  };
}

/**
 * The typed data a department that holds its own key signs for this decision: its versions resolved now, its
 * department's next nonce (read from the chain) and a deadline 15 minutes ahead.
 */
export async function decisionToSign(
  context: DomainContext,
  principal: Extract<Principal, { kind: "department" }>,
  requestId: string,
  decision: Decision,
) {
  const request = await findVisibleRequest(context.pool, principal, requestId);
  const department = await callerDepartment(context, principal.code);
  const review = resolveReview(await anchoredDocumentsOf(context.pool, request.tokenId), decision);
  const record = await departmentRecord(context.gateway, context.contracts.ApprovalRegistry, department.departmentId);
  const deadline = BigInt(Math.floor(Date.now() / 1000) + SIGNATURE_LIFETIME_SECONDS);
  const message = decisionMessage(
    request.tokenId,
    department.departmentId,
    decision,
    review,
    BigInt(record.nonce),
    deadline,
  );
  return {
    typedData: decisionTypedData(context.config.chainId, context.contracts.ApprovalRegistry, message),
    signer: department.wallet,
    custody: department.custody,
    documentVersions: review.covered,
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
  const data = decisionCall(request.tokenId, department, decision, review, remarks, signed);

  let tx;
  try {
    tx = await context.gateway.send(
      {
        kind: decision.kind === "APPROVED" ? "APPROVAL" : decision.kind === "REJECTED" ? "REJECT" : "CHANGES_REQUESTED",
        // A signed decision is relayed by the operator; the chain checks the department wallet's signature.
        from: signed ? context.operator : department.wallet,
        to: context.contracts.ApprovalRegistry,
        data,
        requestId: request.id,
      },
      {
        onRecorded: (client, recorded) =>
          recordDecision(client, meta, recorded, {
            request,
            departmentCode: principal.code,
            decision,
            remarks,
            review,
            signed,
          }),
      },
    );
  } catch (error) {
    throw error instanceof ContractRevertError ? explain(error, documents) : error;
  }
  return decisionAnswer(context, request, decision.kind, tx);
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

/** The registry call: the signed decision to relay, or the custodial department's approve / reject / requestChanges. */
function decisionCall(
  tokenId: bigint,
  department: DepartmentOnChain,
  decision: Decision,
  review: Review,
  remarks: Remarks,
  signed: DecisionSignature | undefined,
) {
  if (signed) {
    const nonce = BigInt(signed.nonce);
    const message = decisionMessage(tokenId, department.departmentId, decision, review, nonce, BigInt(signed.deadline));
    return approvalRegistryCall("decideBySig", [message, hexBytes(signed.signature)]);
  }
  if (decision.kind === "APPROVED") {
    return approvalRegistryCall("approve", [tokenId, review.mask, review.versions, remarks.hash]);
  }
  if (decision.kind === "REJECTED") {
    const reasonCode = reasonCodeOf(decision);
    return approvalRegistryCall("reject", [tokenId, reasonCode, review.mask, review.versions, remarks.hash]);
  }
  return approvalRegistryCall("requestChanges", [tokenId, review.mask, review.versions, remarks.hash]);
}

/** The decision's off-chain remarks and its audit row, in the outbox record's database transaction. */
async function recordDecision(
  client: Tx,
  meta: RequestMeta,
  recorded: RecordedTx,
  facts: {
    request: RequestView;
    departmentCode: string;
    decision: Decision;
    remarks: Remarks;
    review: Review;
    signed?: DecisionSignature;
  },
): Promise<void> {
  const { request, departmentCode, decision, remarks, review, signed } = facts;
  await insertDecisionRemarks(client, {
    txHash: recorded.hash,
    requestId: request.id,
    departmentCode,
    decision: decision.kind,
    remarks: decision.remarks,
    remarksHash: remarks.hash,
    reason: decision.kind === "REJECTED" ? decision.reason : null,
    requiredDocuments: decision.kind === "CHANGES_REQUESTED" ? (decision.requiredDocuments ?? []) : null,
    chainTxId: recorded.id,
  });
  await audit(client, meta, {
    entityType: "APPROVAL",
    entityId: request.id,
    action: decision.kind === "APPROVED" ? "APPROVE" : decision.kind === "REJECTED" ? "REJECT" : "REQUEST_CHANGES",
    oldValue: { status: request.status, stage: request.stage },
    newValue: {
      department: departmentCode,
      decision: decision.kind,
      ...remarks.record,
      reviewedDocuments: decision.reviewedDocuments ?? [],
      documentVersions: review.covered,
      signedByDepartment: Boolean(signed),
    },
    txHash: recorded.hash,
  });
}
