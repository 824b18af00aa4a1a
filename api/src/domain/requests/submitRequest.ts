/**
 * POST /requests/{id}/submit: DRAFT → SUBMITTED (review starts at stage 1), or PENDING_RESUBMISSION → SUBMITTED
 * (review continues in the same stage). Every document type the pinned workflow requires must be uploaded.
 */
import type { Principal } from "../../auth/principal.ts";
import { audited, type RequestMeta } from "../../stores/auditLog.ts";
import { approvalRegistryCall } from "../../chain/contractCalls.ts";
import { AppError } from "../errors.ts";
import { documentsOfRequest } from "../../reads/documentReads.ts";
import type { RequestView } from "../../reads/requestReads.ts";
import type { DomainContext } from "../context.ts";
import { requiredDocumentTypes } from "../workflows/compileWorkflow.ts";
import { invalidState, loadOwnRequest, pinnedWorkflow } from "./requestGuards.ts";
import { reviewState } from "./reviewState.ts";

export async function submitRequest(
  context: DomainContext,
  principal: Principal,
  requestId: string,
  meta: RequestMeta = { principal },
) {
  const request = await loadOwnRequest(context, principal, requestId, "applications:write");
  const resubmission = request.status === "PENDING_RESUBMISSION";
  if (request.status !== "DRAFT" && !resubmission) throw invalidState(request, "submit");

  const workflow = await pinnedWorkflow(context, request);
  const uploaded = new Set((await documentsOfRequest(context.pool, request.id)).map((d) => d.docType));
  const missingDocuments = requiredDocumentTypes(workflow.stages).filter((type) => !uploaded.has(type));
  if (missingDocuments.length > 0) {
    throw new AppError(400, "MISSING_DOCUMENTS", `Required documents are missing: ${missingDocuments.join(", ")}`, {
      missingDocuments,
    });
  }

  const tx = await context.gateway.send(
    {
      kind: resubmission ? "RESUBMIT" : "SUBMIT",
      from: context.operator,
      to: context.contracts.ApprovalRegistry,
      data: approvalRegistryCall(resubmission ? "resubmit" : "submit", [request.tokenId]),
      requestId: request.id,
    },
    audited(meta, {
      entityType: "REQUEST",
      entityId: request.id,
      action: resubmission ? "RESUBMIT" : "SUBMIT",
      oldValue: { status: request.status },
      newValue: { status: "SUBMITTED" },
    }),
  );
  return submissionAnswer(context, request, tx.hash);
}

/**
 * The answer to a submission once its transaction is mined: where the review stands (also what a retry of a
 * submission whose process died after recording it is answered with).
 */
export async function submissionAnswer(context: DomainContext, request: RequestView, transactionHash: string) {
  const workflow = await pinnedWorkflow(context, request);
  const state = await reviewState(context, request.tokenId, workflow.stages);
  return {
    requestId: request.id,
    status: "SUBMITTED",
    currentStage: state.currentStage,
    pendingDepartments: state.pendingDepartments,
    transactionHash,
  };
}
