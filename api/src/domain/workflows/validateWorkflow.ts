/**
 * The platform's rules for a workflow definition, checked before anything is sent to the chain (the chain checks
 * the same limits again and refuses what slips through) and on demand against the current departments.
 * Every problem is reported at once, each with a stable code, a message and the JSON path of the offending value
 * in the definition as given (stages in the order sent; a stored definition is kept sorted by stageOrder).
 */
import type pg from "pg";
import { REQUEST_TYPES } from "../../schemas/common.ts";
import type { CreateWorkflowInput, WorkflowErrorCode, WorkflowValidationError, WorkflowValidationResult } from "../../schemas/workflow.ts";

export const MAX_STAGES = 16;
export const MAX_STAGE_DEPARTMENTS = 8;
/** A request holds at most 16 documents on chain, one per type: a workflow needing more could never be submitted. */
export const MAX_DOCUMENT_TYPES = 16;
/** A document type code: upper case, digits and underscores, 2..31 characters (it is stored as a bytes32 on chain). */
export const DOCUMENT_TYPE_CODE = /^[A-Z][A-Z0-9_]{1,30}$/;

/** What the rules need to know about a department: whether it is registered (present) and active. */
export type DepartmentStates = ReadonlyMap<string, { active: boolean }>;

/** Validates against the departments registered on chain now (index.departments). */
export async function validateWorkflow(context: { pool: pg.Pool }, input: CreateWorkflowInput): Promise<WorkflowValidationResult> {
  const codes = [...new Set(input.stages.flatMap((stage) => stage.requiredApprovals.map((approval) => approval.departmentCode)))];
  const { rows } = codes.length
    ? await context.pool.query(`SELECT code, active FROM index.departments WHERE code = ANY($1)`, [codes])
    : { rows: [] as { code: string; active: boolean }[] };
  const departments = new Map(rows.map((row) => [row.code as string, { active: Boolean(row.active) }]));
  const errors = checkWorkflow(input, departments);
  return { isValid: errors.length === 0, errors };
}

/** The rules themselves, without I/O. */
export function checkWorkflow(input: CreateWorkflowInput, departments: DepartmentStates): WorkflowValidationError[] {
  const errors: WorkflowValidationError[] = [];
  const report = (code: WorkflowErrorCode, path: string, message: string) => errors.push({ code, message, path });
  const { stages } = input;

  if (!(REQUEST_TYPES as readonly string[]).includes(input.workflowType)) {
    report("UNKNOWN_WORKFLOW_TYPE", "workflowType", `Unknown workflow type ${input.workflowType}: it must be a request type (${REQUEST_TYPES.join(", ")})`);
  }
  if (stages.length === 0) report("NO_STAGES", "stages", "A workflow needs at least one stage");
  if (stages.length > MAX_STAGES) report("TOO_MANY_STAGES", "stages", `A workflow has at most ${MAX_STAGES} stages; this one has ${stages.length}`);

  // Stage order: distinct values, exactly 1..n. Stages run in that order, one after the other, so a definition
  // with distinct, contiguous orders cannot have a cycle or a missing step.
  const seenOrders = new Map<number, number>();
  stages.forEach((stage, i) => {
    const first = seenOrders.get(stage.stageOrder);
    if (first === undefined) seenOrders.set(stage.stageOrder, i);
    else report("DUPLICATE_STAGE_ORDER", `stages[${i}].stageOrder`, `Stage order ${stage.stageOrder} is already used by stages[${first}]`);
  });
  const distinct = seenOrders.size;
  for (const [order, i] of seenOrders) {
    if (order < 1 || order > distinct) {
      const missing = Array.from({ length: distinct }, (_, k) => k + 1).filter((k) => !seenOrders.has(k));
      report("NON_CONTIGUOUS_STAGE_ORDER", `stages[${i}].stageOrder`, `Stage orders must be 1..${distinct} without gaps; ${order} is out of place (missing: ${missing.join(", ")})`);
    }
  }
  const seenIds = new Map<string, number>();
  stages.forEach((stage, i) => {
    const first = seenIds.get(stage.stageId);
    if (first === undefined) seenIds.set(stage.stageId, i);
    else report("DUPLICATE_STAGE_ID", `stages[${i}].stageId`, `Stage id ${stage.stageId} is already used by stages[${first}]`);
  });

  stages.forEach((stage, i) => {
    const at = `stages[${i}]`;
    const approvals = stage.requiredApprovals;
    const count = approvals.length;
    const completion = stage.completionCriteria ?? "ALL";
    if (count === 0) report("EMPTY_STAGE", `${at}.requiredApprovals`, `Stage ${stage.stageId} lists no department`);
    if (count > MAX_STAGE_DEPARTMENTS) {
      report("TOO_MANY_DEPARTMENTS", `${at}.requiredApprovals`, `A stage has at most ${MAX_STAGE_DEPARTMENTS} departments; stage ${stage.stageId} has ${count}`);
    }

    const seenCodes = new Map<string, number>();
    approvals.forEach((approval, j) => {
      const path = `${at}.requiredApprovals[${j}]`;
      const code = approval.departmentCode;
      const first = seenCodes.get(code);
      if (first !== undefined) {
        report("DUPLICATE_DEPARTMENT_IN_STAGE", `${path}.departmentCode`, `Department ${code} is already listed in this stage (requiredApprovals[${first}])`);
      } else {
        seenCodes.set(code, j);
        const department = departments.get(code);
        if (!department) report("UNKNOWN_DEPARTMENT", `${path}.departmentCode`, `No department ${code} is registered`);
        else if (!department.active) report("INACTIVE_DEPARTMENT", `${path}.departmentCode`, `Department ${code} is inactive`);
      }
      approval.requiredDocuments.forEach((docType, k) => {
        if (!DOCUMENT_TYPE_CODE.test(docType)) {
          report("UNKNOWN_DOCUMENT_TYPE", `${path}.requiredDocuments[${k}]`, `${JSON.stringify(docType)} is not a document type code (upper case letters, digits and _, 2..31 characters, starting with a letter)`);
        }
      });
      if (completion === "ALL" && approval.isMandatory === false) {
        report("CONTRADICTORY_SETTINGS", `${path}.isMandatory`, "With completionCriteria ALL every department must approve: isMandatory false has no effect (use ANY or THRESHOLD for optional departments)");
      }
    });

    const mandatory = approvals.filter((approval) => approval.isMandatory !== false).length;
    if (completion === "THRESHOLD") {
      const threshold = stage.threshold;
      if (count === 0) {
        // EMPTY_STAGE says it all.
      } else if (threshold === undefined || threshold < 1 || threshold > count) {
        report("THRESHOLD_OUT_OF_RANGE", `${at}.threshold`, `A THRESHOLD stage needs threshold between 1 and its number of departments (${count}); got ${threshold ?? "none"}`);
      } else if (mandatory > threshold) {
        report("CONTRADICTORY_SETTINGS", `${at}.threshold`, `Threshold ${threshold} is below the ${mandatory} mandatory departments, which must all approve: raise the threshold or make fewer departments mandatory`);
      }
    } else {
      if (stage.threshold !== undefined) {
        report("THRESHOLD_OUT_OF_RANGE", `${at}.threshold`, `threshold applies to THRESHOLD stages only; a ${completion} stage must not set it`);
      }
      if (completion === "ANY" && mandatory > 1) {
        report("CONTRADICTORY_SETTINGS", `${at}.completionCriteria`, `ANY means one approval suffices, but ${mandatory} departments are mandatory and must all approve: use THRESHOLD or ALL, or make at most one department mandatory`);
      }
    }
    if (stage.onTimeout !== undefined && stage.timeoutDays === undefined) {
      report("CONTRADICTORY_SETTINGS", `${at}.onTimeout`, `onTimeout ${stage.onTimeout} needs timeoutDays`);
    }
  });

  const documentTypes = new Set(stages.flatMap((stage) => stage.requiredApprovals.flatMap((approval) => approval.requiredDocuments)));
  if (documentTypes.size > MAX_DOCUMENT_TYPES) {
    report("TOO_MANY_DOCUMENT_TYPES", "stages", `A request holds at most ${MAX_DOCUMENT_TYPES} documents; this workflow requires ${documentTypes.size} document types`);
  }
  return errors;
}
