/**
 * The platform's rules for a workflow definition, checked before anything is sent to the chain (the chain checks
 * the same limits again and refuses what slips through) and on demand against the current departments.
 * Every problem is reported at once, each with a stable code, a message and the JSON path of the offending value
 * in the definition as given (stages in the order sent; a stored definition is kept sorted by stageOrder).
 */
import type { DbPool } from "../../db/queryable.ts";
import { departmentStatesOf } from "../../reads/departmentReads.ts";
import { REQUEST_TYPES } from "../../routes/schemas/common.ts";
import type {
  CreateWorkflowInput,
  WorkflowErrorCode,
  WorkflowValidationError,
  WorkflowValidationResult,
} from "../../routes/schemas/workflow.ts";

export const MAX_STAGES = 16;
export const MAX_STAGE_DEPARTMENTS = 8;
/** A request holds at most 16 documents on chain, one per type: a workflow needing more could never be submitted. */
export const MAX_DOCUMENT_TYPES = 16;
/** A document type code: upper case, digits and underscores, 2..31 characters (it is stored as a bytes32 on chain). */
export const DOCUMENT_TYPE_CODE = /^[A-Z][A-Z0-9_]{1,30}$/;

/** What the rules need to know about a department: whether it is registered (present) and active. */
export type DepartmentStates = ReadonlyMap<string, { active: boolean }>;

/** Validates against the departments registered on chain now (index.departments). */
export async function validateWorkflow(
  context: { pool: DbPool },
  input: CreateWorkflowInput,
): Promise<WorkflowValidationResult> {
  const codes = [
    ...new Set(input.stages.flatMap((stage) => stage.requiredApprovals.map((approval) => approval.departmentCode))),
  ];
  const errors = checkWorkflow(input, await departmentStatesOf(context.pool, codes));
  return { isValid: errors.length === 0, errors };
}

type Report = (code: WorkflowErrorCode, path: string, message: string) => void;
type Stage = CreateWorkflowInput["stages"][number];
type Approval = Stage["requiredApprovals"][number];

/** The rules themselves, without I/O, one check per rule; problems are reported in this order. */
export function checkWorkflow(input: CreateWorkflowInput, departments: DepartmentStates): WorkflowValidationError[] {
  const errors: WorkflowValidationError[] = [];
  const report: Report = (code, path, message) => errors.push({ code, message, path });
  checkWorkflowType(input.workflowType, report);
  checkStageCount(input.stages, report);
  checkStageOrders(input.stages, report);
  checkStageIds(input.stages, report);
  input.stages.forEach((stage, i) => checkStage(stage, `stages[${i}]`, departments, report));
  checkDocumentTypeCount(input.stages, report);
  return errors;
}

function checkWorkflowType(workflowType: string, report: Report): void {
  if (!(REQUEST_TYPES as readonly string[]).includes(workflowType)) {
    report(
      "UNKNOWN_WORKFLOW_TYPE",
      "workflowType",
      `Unknown workflow type ${workflowType}: it must be a request type (${REQUEST_TYPES.join(", ")})`,
    );
  }
}

function checkStageCount(stages: readonly Stage[], report: Report): void {
  if (stages.length === 0) report("NO_STAGES", "stages", "A workflow needs at least one stage");
  if (stages.length > MAX_STAGES)
    report("TOO_MANY_STAGES", "stages", `A workflow has at most ${MAX_STAGES} stages; this one has ${stages.length}`);
}

/**
 * Stage order: distinct values, exactly 1..n. Stages run in that order, one after the other, so a definition with
 * distinct, contiguous orders cannot have a cycle or a missing step.
 */
function checkStageOrders(stages: readonly Stage[], report: Report): void {
  const seenOrders = new Map<number, number>();
  stages.forEach((stage, i) => {
    const first = seenOrders.get(stage.stageOrder);
    if (first === undefined) seenOrders.set(stage.stageOrder, i);
    else
      report(
        "DUPLICATE_STAGE_ORDER",
        `stages[${i}].stageOrder`,
        `Stage order ${stage.stageOrder} is already used by stages[${first}]`,
      );
  });
  const distinct = seenOrders.size;
  for (const [order, i] of seenOrders) {
    if (order < 1 || order > distinct) {
      const missing = Array.from({ length: distinct }, (_, k) => k + 1).filter((k) => !seenOrders.has(k));
      report(
        "NON_CONTIGUOUS_STAGE_ORDER",
        `stages[${i}].stageOrder`,
        `Stage orders must be 1..${distinct} without gaps; ${order} is out of place (missing: ${missing.join(", ")})`,
      );
    }
  }
}

function checkStageIds(stages: readonly Stage[], report: Report): void {
  const seenIds = new Map<string, number>();
  stages.forEach((stage, i) => {
    const first = seenIds.get(stage.stageId);
    if (first === undefined) seenIds.set(stage.stageId, i);
    else
      report(
        "DUPLICATE_STAGE_ID",
        `stages[${i}].stageId`,
        `Stage id ${stage.stageId} is already used by stages[${first}]`,
      );
  });
}

/** One stage: its size, each department it lists, its completion rule and its timeout. */
function checkStage(stage: Stage, at: string, departments: DepartmentStates, report: Report): void {
  checkStageSize(stage, at, report);
  const completion = stage.completionCriteria ?? "ALL";
  const seenCodes = new Map<string, number>();
  stage.requiredApprovals.forEach((approval, j) => {
    const path = `${at}.requiredApprovals[${j}]`;
    checkListedDepartment(approval.departmentCode, j, seenCodes, departments, `${path}.departmentCode`, report);
    checkDocumentTypeCodes(approval, path, report);
    if (completion === "ALL" && approval.isMandatory === false) {
      report(
        "CONTRADICTORY_SETTINGS",
        `${path}.isMandatory`,
        "With completionCriteria ALL every department must approve: isMandatory false has no effect (use ANY or THRESHOLD for optional departments)",
      );
    }
  });
  checkCompletion(stage, completion, at, report);
  if (stage.onTimeout !== undefined && stage.timeoutDays === undefined) {
    report("CONTRADICTORY_SETTINGS", `${at}.onTimeout`, `onTimeout ${stage.onTimeout} needs timeoutDays`);
  }
}

function checkStageSize(stage: Stage, at: string, report: Report): void {
  const count = stage.requiredApprovals.length;
  if (count === 0) report("EMPTY_STAGE", `${at}.requiredApprovals`, `Stage ${stage.stageId} lists no department`);
  if (count > MAX_STAGE_DEPARTMENTS) {
    report(
      "TOO_MANY_DEPARTMENTS",
      `${at}.requiredApprovals`,
      `A stage has at most ${MAX_STAGE_DEPARTMENTS} departments; stage ${stage.stageId} has ${count}`,
    );
  }
}

/** A department once per stage, registered and active. */
function checkListedDepartment(
  code: string,
  j: number,
  seenCodes: Map<string, number>,
  departments: DepartmentStates,
  path: string,
  report: Report,
): void {
  const first = seenCodes.get(code);
  if (first !== undefined) {
    report(
      "DUPLICATE_DEPARTMENT_IN_STAGE",
      path,
      `Department ${code} is already listed in this stage (requiredApprovals[${first}])`,
    );
    return;
  }
  seenCodes.set(code, j);
  const department = departments.get(code);
  if (!department) report("UNKNOWN_DEPARTMENT", path, `No department ${code} is registered`);
  else if (!department.active) report("INACTIVE_DEPARTMENT", path, `Department ${code} is inactive`);
}

function checkDocumentTypeCodes(approval: Approval, path: string, report: Report): void {
  approval.requiredDocuments.forEach((docType, k) => {
    if (!DOCUMENT_TYPE_CODE.test(docType)) {
      report(
        "UNKNOWN_DOCUMENT_TYPE",
        `${path}.requiredDocuments[${k}]`,
        `${JSON.stringify(docType)} is not a document type code (upper case letters, digits and _, 2..31 characters, starting with a letter)`,
      );
    }
  });
}

/** The completion rule against the stage's departments: a threshold in range, and no mandatory set it contradicts. */
function checkCompletion(stage: Stage, completion: string, at: string, report: Report): void {
  const count = stage.requiredApprovals.length;
  const mandatory = stage.requiredApprovals.filter((approval) => approval.isMandatory !== false).length;
  if (completion === "THRESHOLD") {
    const threshold = stage.threshold;
    // An empty stage: EMPTY_STAGE says it all.
    if (count === 0) return;
    if (threshold === undefined || threshold < 1 || threshold > count) {
      report(
        "THRESHOLD_OUT_OF_RANGE",
        `${at}.threshold`,
        `A THRESHOLD stage needs threshold between 1 and its number of departments (${count}); got ${threshold ?? "none"}`,
      );
    } else if (mandatory > threshold) {
      report(
        "CONTRADICTORY_SETTINGS",
        `${at}.threshold`,
        `Threshold ${threshold} is below the ${mandatory} mandatory departments, which must all approve: raise the threshold or make fewer departments mandatory`,
      );
    }
    return;
  }
  if (stage.threshold !== undefined) {
    report(
      "THRESHOLD_OUT_OF_RANGE",
      `${at}.threshold`,
      `threshold applies to THRESHOLD stages only; a ${completion} stage must not set it`,
    );
  }
  if (completion === "ANY" && mandatory > 1) {
    report(
      "CONTRADICTORY_SETTINGS",
      `${at}.completionCriteria`,
      `ANY means one approval suffices, but ${mandatory} departments are mandatory and must all approve: use THRESHOLD or ALL, or make at most one department mandatory`,
    );
  }
}

/** A request holds at most MAX_DOCUMENT_TYPES documents: more required types could never all be uploaded. */
function checkDocumentTypeCount(stages: readonly Stage[], report: Report): void {
  const documentTypes = new Set(
    stages.flatMap((stage) => stage.requiredApprovals.flatMap((approval) => approval.requiredDocuments)),
  );
  if (documentTypes.size > MAX_DOCUMENT_TYPES) {
    report(
      "TOO_MANY_DOCUMENT_TYPES",
      "stages",
      `A request holds at most ${MAX_DOCUMENT_TYPES} documents; this workflow requires ${documentTypes.size} document types`,
    );
  }
}
