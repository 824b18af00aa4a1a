/**
 * POST /requests/{id}/submit: DRAFT → SUBMITTED (review starts at stage 1), or PENDING_RESUBMISSION → SUBMITTED
 * (review continues in the same stage). Every document type the pinned workflow requires must be uploaded.
 */
import type { Principal } from "../../auth/principal.ts";
import { audit, type RequestMeta } from "../../audit/auditLog.ts";
import { pendingDepartmentsOf, progressOf } from "../../chain/contractReads.ts";
import { approvalRegistry } from "../../chain/contracts.ts";
import { AppError, conflict, notFound } from "../../errors.ts";
import { documentsOfRequest } from "../../reads/documentReads.ts";
import { canActFor, departmentCodes, findRequest, type RequestView } from "../../reads/requestReads.ts";
import type { DomainContext } from "../context.ts";
import { requiredDocumentTypes, sortedStages } from "../workflows/compileWorkflow.ts";
import { stageView } from "../workflows/stageView.ts";
import { departmentNames } from "../workflows/workflowView.ts";

export async function loadOwnRequest(context: DomainContext, principal: Principal, requestId: string, scope: "applications:write" | "documents:write"): Promise<RequestView> {
  const request = await findRequest(context.pool, requestId);
  // Another applicant's request does not exist as far as this caller can tell.
  if (!request || !canActFor(principal, request, scope)) throw notFound("Request");
  return request;
}

export const invalidState = (request: RequestView, action: string) =>
  conflict("INVALID_STATE", `Cannot ${action} a request in status ${request.status}`, { currentStatus: request.status });

export async function submitRequest(context: DomainContext, principal: Principal, requestId: string, meta: RequestMeta = { principal }) {
  const request = await loadOwnRequest(context, principal, requestId, "applications:write");
  const resubmission = request.status === "PENDING_RESUBMISSION";
  if (request.status !== "DRAFT" && !resubmission) throw invalidState(request, "submit");

  const workflow = await context.workflows.byChainId(request.chainWorkflowId);
  if (!workflow) throw new Error(`pinned workflow ${request.chainWorkflowId} has no stored definition`);
  const uploaded = new Set((await documentsOfRequest(context.pool, request.id)).map((d) => d.docType));
  const missingDocuments = requiredDocumentTypes(workflow.stages).filter((type) => !uploaded.has(type));
  if (missingDocuments.length > 0) {
    throw new AppError(400, "MISSING_DOCUMENTS", `Required documents are missing: ${missingDocuments.join(", ")}`, { missingDocuments });
  }

  const tx = await context.gateway.send(
    {
      kind: resubmission ? "RESUBMIT" : "SUBMIT",
      from: context.operator,
      to: context.contracts.ApprovalRegistry,
      data: approvalRegistry.encodeFunctionData(resubmission ? "resubmit" : "submit", [request.tokenId]),
      requestId: request.id,
    },
    {
      onRecorded: (client, recorded) =>
        audit(client, meta, { entityType: "REQUEST", entityId: request.id, action: resubmission ? "RESUBMIT" : "SUBMIT", oldValue: { status: request.status }, newValue: { status: "SUBMITTED" }, txHash: recorded.hash }),
    },
  );
  const state = await reviewState(context, request.tokenId, workflow.stages);
  return { requestId: request.id, status: "SUBMITTED", currentStage: state.currentStage, pendingDepartments: state.pendingDepartments, transactionHash: tx.hash };
}

/** Stage `index` of a workflow as the API shows it, with department names; null past the last stage. */
async function currentStageView(context: DomainContext, stages: Parameters<typeof sortedStages>[0], index: number) {
  const stage = sortedStages(stages)[index];
  return stage ? stageView(stage, await departmentNames(context.pool, stage.requiredApprovals.map((a) => a.departmentCode))) : null;
}

/** The current stage (from the chain's progress) and the departments that can decide now (a chain call). */
export async function reviewState(context: DomainContext, tokenId: bigint, stages: Parameters<typeof sortedStages>[0]) {
  const progress = await progressOf(context.gateway, context.contracts.ApprovalRegistry, tokenId);
  const pendingIds = await pendingDepartmentsOf(context.gateway, context.contracts.ApprovalRegistry, tokenId);
  const codes = await departmentCodes(context.pool, [...pendingIds]);
  return {
    stageIndex: progress.stage,
    currentStage: await currentStageView(context, stages, progress.stage),
    pendingDepartments: pendingIds.map((id) => codes.get(id) ?? String(id)),
  };
}
