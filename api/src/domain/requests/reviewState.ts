/** Where a request's review stands now, as the answers of submit and decide report it. */
import { pendingDepartmentsOf, progressOf } from "../../chain/contractReads.ts";
import { departmentCodes } from "../../reads/requestReads.ts";
import { stageView } from "../../reads/stageView.ts";
import { departmentNames } from "../../reads/workflowView.ts";
import type { DomainContext } from "../context.ts";
import { sortedStages } from "../workflows/compileWorkflow.ts";

type Stages = Parameters<typeof sortedStages>[0];

/** Stage `index` of a workflow as the API shows it, with department names; null past the last stage. */
async function currentStageView(context: DomainContext, stages: Stages, index: number) {
  const stage = sortedStages(stages)[index];
  return stage
    ? stageView(
        stage,
        await departmentNames(
          context.pool,
          stage.requiredApprovals.map((a) => a.departmentCode),
        ),
      )
    : null;
}

/** The current stage (from the chain's progress) and the departments that can decide now (a chain call). */
export async function reviewState(context: DomainContext, tokenId: bigint, stages: Stages) {
  const progress = await progressOf(context.gateway, context.contracts.ApprovalRegistry, tokenId);
  const pendingIds = await pendingDepartmentsOf(context.gateway, context.contracts.ApprovalRegistry, tokenId);
  const codes = await departmentCodes(context.pool, [...pendingIds]);
  return {
    currentStage: await currentStageView(context, stages, progress.stage),
    pendingDepartments: pendingIds.map((id) => codes.get(id) ?? String(id)),
  };
}
