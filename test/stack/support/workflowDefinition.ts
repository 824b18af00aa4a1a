/**
 * Workflow definitions in a line per stage: `workflow(type, name, stage(...), ...)` numbers the stages 1..n, and a
 * stage names each department with the document types it reviews (completion ALL and every department mandatory,
 * unless `extra` says otherwise: its `optional` lists the departments that are not).
 */
import type { CreateWorkflowInput, WorkflowStageInput } from "../../../api/src/routes/schemas/workflow.ts";

type StageInput = Omit<WorkflowStageInput, "stageOrder">;

export function stage(
  stageId: string,
  stageName: string,
  executionType: WorkflowStageInput["executionType"],
  documentsByDepartment: Record<string, string[]>,
  { optional = [], ...extra }: Partial<StageInput> & { optional?: string[] } = {},
): StageInput {
  return {
    stageId,
    stageName,
    executionType,
    completionCriteria: "ALL",
    requiredApprovals: Object.entries(documentsByDepartment).map(([departmentCode, requiredDocuments]) => ({
      departmentCode,
      requiredDocuments,
      isMandatory: !optional.includes(departmentCode),
    })),
    ...extra,
  };
}

export function workflow(workflowType: string, name: string, ...stages: StageInput[]): CreateWorkflowInput {
  return { workflowType, name, stages: stages.map((s, i) => ({ ...s, stageOrder: i + 1 })) };
}
