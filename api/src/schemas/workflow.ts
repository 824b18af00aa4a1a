/** Workflow definitions: the spec's CreateWorkflowInput / WorkflowStageInput / Workflow / WorkflowStage. */
import { z } from "zod/v4";
import { DateTime, Uuid } from "./common.ts";

export const RequiredApprovalInput = z.object({
  departmentCode: z.string().regex(/^[A-Z_]+$/),
  requiredDocuments: z.array(z.string().regex(/^[A-Z0-9_]+$/).max(64)).max(16),
  isMandatory: z.boolean(),
});

export const WorkflowStageInput = z
  .object({
    stageId: z.string().min(1).max(64),
    stageName: z.string().min(1).max(200),
    stageOrder: z.int().min(1).max(16),
    executionType: z.enum(["SEQUENTIAL", "PARALLEL"]),
    requiredApprovals: z.array(RequiredApprovalInput).max(8),
    completionCriteria: z.enum(["ALL", "ANY", "THRESHOLD"]).default("ALL"),
    threshold: z.int().min(0).max(8).optional(),
    timeoutDays: z.number().positive().max(3650).optional(),
    onTimeout: z.enum(["NOTIFY", "ESCALATE", "AUTO_REJECT"]).optional(),
    onRejection: z.enum(["FAIL_REQUEST", "RETRY_STAGE", "ESCALATE"]).optional(),
  })
  .meta({ id: "WorkflowStageInput" });
export type WorkflowStageInput = z.infer<typeof WorkflowStageInput>;

export const CreateWorkflowInput = z
  .object({
    workflowType: z.string().min(1).max(31),
    name: z.string().min(1).max(200),
    description: z.string().max(2000).optional(),
    stages: z.array(WorkflowStageInput).max(16),
  })
  .meta({ id: "CreateWorkflowInput" });
export type CreateWorkflowInput = z.infer<typeof CreateWorkflowInput>;

export const WorkflowStage = WorkflowStageInput.extend({
  requiredApprovals: z.array(RequiredApprovalInput.extend({ departmentName: z.string() })),
  onTimeout: z.string().optional(),
  onRejection: z.string().optional(),
}).meta({ id: "WorkflowStage" });
export type WorkflowStage = z.infer<typeof WorkflowStage>;

export const Workflow = z
  .object({
    workflowId: Uuid,
    workflowType: z.string(),
    name: z.string(),
    description: z.string(),
    version: z.int(),
    isActive: z.boolean(),
    stages: z.array(WorkflowStage),
    createdAt: DateTime,
    updatedAt: DateTime,
  })
  .meta({ id: "Workflow" });
