/**
 * Workflow definitions: the spec's CreateWorkflowInput / WorkflowStageInput / Workflow / WorkflowStage.
 *
 * The schemas check shape only (types, enums, generous size caps against abuse). The platform's rules (known
 * request type, registered and active departments, stage order 1..n, at most 16 stages of 8 departments,
 * thresholds, document type codes, contradictory settings) are checked by `validateWorkflow`, which reports every
 * problem at once with a stable code and a JSON path (400 INVALID_WORKFLOW on create/update, 200 on validate).
 */
import { z } from "zod/v4";
import { DateTime, Uuid } from "./common.ts";
import { COMPLETION_CRITERIA, EXECUTION_TYPES, REJECTION_ACTIONS, TIMEOUT_ACTIONS } from "./contractNames.ts";

export const RequiredApprovalInput = z.object({
  departmentCode: z.string().min(1).max(64).describe("Code of a registered, active department"),
  requiredDocuments: z
    .array(z.string().min(1).max(64))
    .max(64)
    .default([])
    .describe(
      "Document type codes (^[A-Z][A-Z0-9_]{1,30}$) this department reviews; the applicant must upload each before submitting",
    ),
  isMandatory: z
    .boolean()
    .default(true)
    .describe(
      "ANY/THRESHOLD: this department must approve in any case. ALL: every department must, so false is refused",
    ),
});

export const WorkflowStageInput = z
  .object({
    stageId: z.string().min(1).max(64),
    stageName: z.string().min(1).max(200),
    stageOrder: z.int().describe("Position of the stage: the stages' orders must be exactly 1..n"),
    executionType: z.enum(EXECUTION_TYPES),
    requiredApprovals: z.array(RequiredApprovalInput).max(64).describe("1..8 distinct departments"),
    completionCriteria: z.enum(COMPLETION_CRITERIA).default("ALL"),
    threshold: z.int().optional().describe("THRESHOLD only: minimum approvals, 1..number of departments of the stage"),
    timeoutDays: z.number().positive().max(3650).optional(),
    onTimeout: z.enum(TIMEOUT_ACTIONS).optional().describe("Needs timeoutDays; default NOTIFY when timeoutDays is set"),
    onRejection: z.enum(REJECTION_ACTIONS).optional().describe("Default FAIL_REQUEST"),
  })
  .meta({ id: "WorkflowStageInput" });
export type WorkflowStageInput = z.infer<typeof WorkflowStageInput>;

export const CreateWorkflowInput = z
  .object({
    workflowType: z
      .string()
      .min(1)
      .max(64)
      .describe("A request type: RESORT_LICENSE, TRADE_LICENSE or BUILDING_PERMIT"),
    name: z.string().min(1).max(200),
    description: z.string().max(2000).optional(),
    stages: z.array(WorkflowStageInput).max(64).describe("1..16 stages"),
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
    version: z.int().describe("1, 2, ... per workflow type (assigned on chain)"),
    isActive: z
      .boolean()
      .describe("The active version of its type (on chain); new requests of the type are pinned to it"),
    stages: z.array(WorkflowStage),
    createdAt: DateTime.describe("Registration time of this version on chain (block timestamp)"),
    updatedAt: DateTime.describe(
      "Deactivation time on chain once deactivated, else createdAt (a version never changes otherwise)",
    ),
  })
  .meta({ id: "Workflow" });
export type Workflow = z.infer<typeof Workflow>;

export const WorkflowListResponse = z.object({ workflows: z.array(Workflow) }).meta({ id: "WorkflowListResponse" });

export const WORKFLOW_ERROR_CODES = [
  "UNKNOWN_WORKFLOW_TYPE",
  "NO_STAGES",
  "TOO_MANY_STAGES",
  "DUPLICATE_STAGE_ORDER",
  "NON_CONTIGUOUS_STAGE_ORDER",
  "DUPLICATE_STAGE_ID",
  "EMPTY_STAGE",
  "TOO_MANY_DEPARTMENTS",
  "UNKNOWN_DEPARTMENT",
  "INACTIVE_DEPARTMENT",
  "DUPLICATE_DEPARTMENT_IN_STAGE",
  "THRESHOLD_OUT_OF_RANGE",
  "UNKNOWN_DOCUMENT_TYPE",
  "TOO_MANY_DOCUMENT_TYPES",
  "CONTRADICTORY_SETTINGS",
] as const;
export type WorkflowErrorCode = (typeof WORKFLOW_ERROR_CODES)[number];

export const WorkflowValidationError = z
  .object({
    code: z.enum(WORKFLOW_ERROR_CODES),
    message: z.string(),
    path: z.string().meta({ example: "stages[1].requiredApprovals[0].departmentCode" }),
  })
  .meta({ id: "WorkflowValidationError" });
export type WorkflowValidationError = z.infer<typeof WorkflowValidationError>;

export const WorkflowValidationResult = z
  .object({ isValid: z.boolean(), errors: z.array(WorkflowValidationError) })
  .meta({ id: "WorkflowValidationResult", description: "Problems are reported here (200), not as an HTTP error." });
export type WorkflowValidationResult = z.infer<typeof WorkflowValidationResult>;

export const DeactivateWorkflowResponse = z
  .object({
    workflowId: Uuid,
    workflowType: z.string(),
    version: z.int(),
    isActive: z.literal(false),
    deactivatedAt: DateTime,
    transactionHash: z.string(),
  })
  .meta({ id: "DeactivateWorkflowResponse" });
