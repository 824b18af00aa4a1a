/**
 * A workflow definition (the spec's WorkflowStageInput[]) in the compact form the approval registry stores, and
 * the hash of its canonical JSON that links the on-chain version to the full definition kept off chain.
 */
import { id } from "ethers";
import { type Hex, stringToBytes32 } from "../../../../abis/index.ts";
import { canonicalJson } from "../../encoding/canonicalJson.ts";
import type { CreateWorkflowInput, WorkflowStageInput } from "../../routes/schemas/workflow.ts";

import {
  COMPLETION_NAMES,
  enumValueOf,
  EXECUTION_TYPE_NAMES,
  REJECTION_ACTION_NAMES,
  TIMEOUT_ACTION_NAMES,
} from "../../chain/contracts.ts";

export interface ChainStageInput {
  executionType: number;
  completion: number;
  threshold: number;
  onTimeout: number;
  onRejection: number;
  timeoutSeconds: number;
  mandatoryMask: number;
  departments: Hex[];
}

export function sortedStages(stages: WorkflowStageInput[]): WorkflowStageInput[] {
  return [...stages].sort((a, b) => a.stageOrder - b.stageOrder);
}

export function compileStages(stages: WorkflowStageInput[]): ChainStageInput[] {
  return sortedStages(stages).map((stage) => {
    const completion = stage.completionCriteria ?? "ALL";
    const timeoutSeconds = stage.timeoutDays ? Math.round(stage.timeoutDays * 86_400) : 0;
    return {
      executionType: enumValueOf(EXECUTION_TYPE_NAMES, stage.executionType),
      completion: enumValueOf(COMPLETION_NAMES, completion),
      threshold: completion === "THRESHOLD" ? (stage.threshold ?? 0) : 0,
      // A timeout without an action notifies; an action without a timeout is refused by validation.
      onTimeout: timeoutSeconds > 0 ? enumValueOf(TIMEOUT_ACTION_NAMES, stage.onTimeout ?? "NOTIFY") : 0,
      onRejection: enumValueOf(REJECTION_ACTION_NAMES, stage.onRejection ?? "FAIL_REQUEST"),
      timeoutSeconds,
      mandatoryMask: stage.requiredApprovals.reduce(
        (mask, approval, i) => (approval.isMandatory ? mask | (1 << i) : mask),
        0,
      ),
      departments: stage.requiredApprovals.map((a) => stringToBytes32(a.departmentCode)),
    };
  });
}

/** keccak256 of the canonical JSON (sorted keys) of the definition and its id: unique per registration. */
export function definitionHash(workflowId: string, input: CreateWorkflowInput): Hex {
  return id(canonicalJson({ workflowId, ...input, stages: sortedStages(input.stages) })) as Hex;
}

/** Document types a request of this workflow may carry, and must carry to be submitted. */
export function requiredDocumentTypes(stages: WorkflowStageInput[]): string[] {
  return [...new Set(stages.flatMap((s) => s.requiredApprovals.flatMap((a) => a.requiredDocuments)))].sort();
}
