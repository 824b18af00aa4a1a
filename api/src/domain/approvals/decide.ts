/**
 * Department decisions: approve, reject, request changes. Each is a transaction from the department's own custodial
 * wallet to the approval registry, which checks on chain that the department is required in the current stage (in
 * its turn for SEQUENTIAL stages) and applies the pinned workflow's rules. The remarks stay off chain; their keccak256
 * is on chain. A refused decision records nothing anywhere.
 */
import { keccak256, toUtf8Bytes } from "ethers";
import type { Principal } from "../../auth/principal.ts";
import { audit, type RequestMeta } from "../../audit/auditLog.ts";
import { ContractRevertError } from "../../chain/chainErrors.ts";
import { approvalRegistry, eventsOf } from "../../chain/contracts.ts";
import { canonicalJson } from "../../canonicalJson.ts";
import { AppError, conflict, forbidden } from "../../http/appError.ts";
import { findRequest, findVisibleRequest, type RequestView } from "../../reads/requestReads.ts";
import { stableUuid } from "../../reads/stableId.ts";
import type { DomainContext } from "../context.ts";
import { reviewState } from "../requests/submitRequest.ts";

export const REJECTION_REASONS = ["SAFETY_VIOLATION", "INCOMPLETE_DOCUMENTS", "POLICY_VIOLATION", "FRAUDULENT_APPLICATION", "OTHER"] as const;
export type RejectionReason = (typeof REJECTION_REASONS)[number];

type Decision =
  | { kind: "APPROVED"; remarks: string; reviewedDocuments: string[] }
  | { kind: "REJECTED"; remarks: string; reason: RejectionReason; reviewedDocuments?: string[] }
  | { kind: "CHANGES_REQUESTED"; remarks: string; requiredDocuments?: string[]; reviewedDocuments?: string[] };

/** Chain refusals, in the API's words (409: the request is not in a state where this department can decide). */
function explain(error: ContractRevertError): AppError {
  switch (error.errorName) {
    case "ReviewNotRequired":
      return conflict("NOT_PENDING", "Your department is not required in the request's current stage", error.details);
    case "ReviewNotYourTurn":
      return conflict("NOT_YOUR_TURN", "This stage is sequential and another department must decide first", error.details);
    case "ReviewAlreadyDecided":
      return conflict("ALREADY_DECIDED", "Your department has already decided in this stage", error.details);
    case "ReviewWrongPhase":
      return conflict("INVALID_STATE", "The request is not under review", error.details);
    case "DepartmentInactive":
      return conflict("DEPARTMENT_INACTIVE", "Your department is deactivated", error.details);
    default:
      return error;
  }
}

async function departmentWallet(context: DomainContext, code: string): Promise<string> {
  const { rows } = await context.pool.query(`SELECT wallet FROM index.departments WHERE code = $1`, [code]);
  if (!rows[0]) throw forbidden("Your department is not registered on chain");
  return rows[0].wallet;
}

/** Document ids of the request → the on-chain bit mask of their indexes; unknown ids are a 400. */
async function reviewedMask(context: DomainContext, request: RequestView, documentIds: string[]): Promise<number> {
  if (documentIds.length === 0) return 0;
  const { rows } = await context.pool.query(`SELECT document_id, doc_index FROM index.documents WHERE token_id = $1`, [request.tokenId.toString()]);
  const indexOf = new Map(rows.map((r) => [r.document_id as string, Number(r.doc_index)]));
  const unknown = documentIds.filter((id) => !indexOf.has(id));
  if (unknown.length > 0) throw new AppError(400, "UNKNOWN_DOCUMENTS", "reviewedDocuments names documents this request does not have", { unknownDocuments: unknown });
  return documentIds.reduce((mask, id) => mask | (1 << indexOf.get(id)!), 0);
}

export async function decide(context: DomainContext, meta: RequestMeta, requestId: string, decision: Decision) {
  const principal = meta.principal as Extract<Principal, { kind: "department" }>;
  // A request not routed to the department does not exist for it, as for its reads: 404 before anything reveals
  // its state (a 409 NOT_PENDING / INVALID_STATE carried the token id and stage) or is simulated on chain.
  const request = await findVisibleRequest(context.pool, principal, requestId);
  const wallet = await departmentWallet(context, principal.code);
  const mask = await reviewedMask(context, request, decision.reviewedDocuments ?? []);
  const remarksRecord = { remarks: decision.remarks, ...(decision.kind === "REJECTED" ? { reason: decision.reason } : {}), ...(decision.kind === "CHANGES_REQUESTED" ? { requiredDocuments: decision.requiredDocuments ?? [] } : {}) };
  const remarksHash = keccak256(toUtf8Bytes(canonicalJson(remarksRecord)));
  const data =
    decision.kind === "APPROVED"
      ? approvalRegistry.encodeFunctionData("approve", [request.tokenId, mask, remarksHash])
      : decision.kind === "REJECTED"
        ? approvalRegistry.encodeFunctionData("reject", [request.tokenId, REJECTION_REASONS.indexOf(decision.reason) + 1, mask, remarksHash])
        : approvalRegistry.encodeFunctionData("requestChanges", [request.tokenId, mask, remarksHash]);

  let tx;
  try {
    tx = await context.gateway.send(
      {
        kind: decision.kind === "APPROVED" ? "APPROVAL" : decision.kind === "REJECTED" ? "REJECT" : "CHANGES_REQUESTED",
        from: wallet,
        to: context.contracts.ApprovalRegistry,
        data,
        requestId: request.id,
      },
      {
        onRecorded: async (client, recorded) => {
          await client.query(
            `INSERT INTO decision_remarks (tx_hash, request_id, department_code, decision, remarks, remarks_hash, reason, required_documents, chain_tx_id)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
            [recorded.hash, request.id, principal.code, decision.kind, decision.remarks, remarksHash, decision.kind === "REJECTED" ? decision.reason : null,
              decision.kind === "CHANGES_REQUESTED" ? JSON.stringify(decision.requiredDocuments ?? []) : null, recorded.id],
          );
          await audit(client, meta, {
            entityType: "APPROVAL",
            entityId: request.id,
            action: decision.kind === "APPROVED" ? "APPROVE" : decision.kind === "REJECTED" ? "REJECT" : "REQUEST_CHANGES",
            oldValue: { status: request.status, stage: request.stage },
            newValue: { department: principal.code, decision: decision.kind, ...remarksRecord, reviewedDocuments: decision.reviewedDocuments ?? [] },
            txHash: recorded.hash,
          });
        },
      },
    );
  } catch (error) {
    throw error instanceof ContractRevertError ? explain(error) : error;
  }

  const recorded = eventsOf(tx.receipt.logs, approvalRegistry, context.contracts.ApprovalRegistry, "DecisionRecorded")[0];
  const logIndex = tx.receipt.logs.find((l) => l.topics[0] === approvalRegistry.getEvent("DecisionRecorded")!.topicHash)?.index ?? 0;
  const after = (await findRequest(context.pool, request.id))!;
  const workflow = await context.workflows.byChainId(request.chainWorkflowId);
  const state = workflow ? await reviewState(context, request.tokenId, workflow.stages) : undefined;
  return {
    approvalId: stableUuid(`approval:${tx.hash}-${logIndex}`),
    status: decision.kind,
    transactionHash: tx.hash,
    requestStatus: after.status,
    workflowStatus: {
      currentStage: after.phase === "CLOSED" ? "" : (state?.currentStage?.stageName ?? ""),
      isComplete: after.status === "APPROVED",
      nextPendingDepartments: after.phase === "IN_REVIEW" ? (state?.pendingDepartments ?? []) : [],
    },
    decidedStage: recorded ? Number(recorded.args.stage) : undefined,
  };
}
