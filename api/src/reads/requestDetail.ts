/**
 * A licence request as GET /requests/{requestId} shows it: its documents, approvals, current stage, timeline and
 * chain data, read in one round trip once the caller is known to see it.
 */
import type pg from "pg";
import { readTogether, type Rows } from "../db/readTogether.ts";
import { sortedStages } from "../domain/workflows/compileWorkflow.ts";
import { stageView } from "./stageView.ts";
import { toWorkflow, workflowByChainIdPart } from "../stores/workflowStore.ts";
import { approvalParts, approvalsFromRows } from "./approvalReads.ts";
import { documentJson, documentsOfRequestPart, groupDocuments } from "./documentReads.ts";
import type { RequestView } from "./requestReads.ts";
import { departmentNamesOf, timelineFromRows, timelineParts } from "./timelineReads.ts";

/**
 * A request the caller may see, in the shape of RequestDetailResponse; `licenceToken` is the token contract's
 * address.
 */
export async function requestDetail(pool: pg.Pool, request: RequestView, licenceToken: string) {
  // Everything else the page shows, in one round trip.
  const rows = await readTogether(pool, {
    documents: documentsOfRequestPart(request.id),
    ...approvalParts(request.tokenId, false),
    ...timelineParts(request),
    workflow: workflowByChainIdPart(request.chainWorkflowId),
  });
  return {
    requestId: request.id,
    requestNumber: request.requestNumber,
    tokenId: Number(request.tokenId),
    requestType: request.requestType,
    status: request.status,
    applicant: { id: request.applicantId, name: request.applicantName, email: request.applicantEmail },
    metadata: request.metadata,
    documents: groupDocuments(rows.documents).map(documentJson),
    approvals: approvalsFromRows(rows.approvals, rows.approvalDocuments).map(
      ({ stage: _stage, ...approval }) => approval,
    ),
    currentStage: currentStageOf(request, rows.workflow, rows.departments),
    timeline: timelineFromRows(request, rows),
    blockchainData: {
      tokenId: Number(request.tokenId),
      contractAddress: licenceToken,
      creationTxHash: request.creationTxHash,
    },
    createdAt: request.createdAt.toISOString(),
    updatedAt: request.updatedAt.toISOString(),
    submittedAt: request.submittedAt?.toISOString() ?? null,
    approvedAt: request.issuedAt?.toISOString() ?? null,
    expiresAt: request.expiresAt?.toISOString() ?? null,
  };
}

/**
 * The stage under review, from the index row (no chain call on this read path): none before submission (no
 * progress row, phase null) and once the review closed.
 */
function currentStageOf(request: RequestView, workflowRows: Rows, departmentRows: Rows) {
  const workflow = workflowRows[0] ? toWorkflow(workflowRows[0]) : undefined;
  const inReview = request.phase !== null && request.phase !== "CLOSED";
  const stage =
    inReview && workflow && request.stage !== null ? sortedStages(workflow.stages)[request.stage] : undefined;
  return stage ? stageView(stage, departmentNamesOf(departmentRows)) : null;
}
