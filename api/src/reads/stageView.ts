/** A stage of a stored workflow as the API returns it (the spec's WorkflowStage): inputs plus department names. */
import type { WorkflowStage, WorkflowStageInput } from "../routes/schemas/workflow.ts";

export function stageView(stage: WorkflowStageInput, departmentNames: Map<string, string>): WorkflowStage {
  return {
    ...stage,
    requiredApprovals: stage.requiredApprovals.map((approval) => ({
      ...approval,
      departmentName: departmentNames.get(approval.departmentCode) ?? approval.departmentCode,
    })),
  };
}
