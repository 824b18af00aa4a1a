/**
 * What a department's decision answers once its transaction is mined: the approval's id (from its DecisionRecorded
 * log) and where the review stands now. One function for the decision itself and for a retry whose process died
 * after recording it (http/idempotency.ts).
 */
import type { ConfirmedTx } from "../../chain/chainGateway.ts";
import { approvalRegistry } from "../../chain/contracts.ts";
import { notFound } from "../errors.ts";
import { findRequest, type RequestView } from "../../reads/requestReads.ts";
import { stableUuid } from "../../reads/stableId.ts";
import type { DomainContext } from "../context.ts";
import { reviewState } from "../requests/reviewState.ts";

export type DecisionKind = "APPROVED" | "REJECTED" | "CHANGES_REQUESTED";

export async function decisionAnswer(
  context: DomainContext,
  request: Pick<RequestView, "id" | "tokenId" | "chainWorkflowId">,
  kind: DecisionKind,
  tx: ConfirmedTx,
) {
  const recordedTopic = approvalRegistry.getEvent("DecisionRecorded")!.topicHash;
  const logIndex = tx.receipt.logs.find((l) => l.topics[0] === recordedTopic)?.index ?? 0;
  const after = await findRequest(context.pool, request.id);
  if (!after) throw notFound("Request");
  const workflow = await context.workflows.byChainId(request.chainWorkflowId);
  const state = workflow ? await reviewState(context, request.tokenId, workflow.stages) : undefined;
  return {
    approvalId: stableUuid(`approval:${tx.hash}-${logIndex}`),
    status: kind,
    transactionHash: tx.hash,
    requestStatus: after.status,
    workflowStatus: {
      currentStage: after.phase === "CLOSED" ? "" : (state?.currentStage?.stageName ?? ""),
      isComplete: after.status === "APPROVED",
      nextPendingDepartments: after.phase === "IN_REVIEW" ? (state?.pendingDepartments ?? []) : [],
    },
  };
}
