/**
 * A stored workflow as the API returns it (the spec's Workflow): the definition as registered, each required
 * approval with its department's name, and the version and active flag the chain holds.
 */
import type pg from "pg";
import type { Workflow } from "../routes/schemas/workflow.ts";
import { stageView } from "./stageView.ts";
import type { StoredWorkflow } from "../stores/workflowStore.ts";

const namesTableSeen = new WeakSet<pg.Pool>();

/**
 * Department names by code. The chain knows codes only (index.departments); names live with the departments
 * capability in the API schema (`departments.code`, `departments.name`) when that table exists. A code without
 * a name is its own name.
 */
export async function departmentNames(pool: pg.Pool, codes: string[]): Promise<Map<string, string>> {
  const unique = [...new Set(codes)];
  const names = new Map(unique.map((code) => [code, code]));
  if (unique.length === 0) return names;
  try {
    if (!namesTableSeen.has(pool)) {
      const { rows } = await pool.query(
        `SELECT count(*)::int = 2 AS ok FROM pg_attribute
         WHERE attrelid = to_regclass('departments') AND attname IN ('code', 'name') AND NOT attisdropped`,
      );
      if (!rows[0]?.ok) return names;
      namesTableSeen.add(pool); // a table, once created, stays
    }
    const { rows } = await pool.query(`SELECT code, name FROM departments WHERE code = ANY($1)`, [unique]);
    for (const row of rows) if (typeof row.name === "string" && row.name) names.set(row.code, row.name);
  } catch {
    // Names are a courtesy: the codes stand in for them.
  }
  return names;
}

export function workflowJson(workflow: StoredWorkflow, names: ReadonlyMap<string, string>): Workflow {
  return {
    workflowId: workflow.id,
    workflowType: workflow.workflowType,
    name: workflow.name,
    description: workflow.description,
    version: workflow.version,
    isActive: workflow.isActive,
    stages: workflow.stages.map((stage) => stageView(stage, names as Map<string, string>)),
    createdAt: workflow.createdAt.toISOString(),
    updatedAt: workflow.updatedAt.toISOString(),
  };
}

/** Workflows as JSON, with one names query for all of them. */
export async function workflowsJson(pool: pg.Pool, workflows: StoredWorkflow[]): Promise<Workflow[]> {
  const codes = workflows.flatMap((w) => w.stages.flatMap((s) => s.requiredApprovals.map((a) => a.departmentCode)));
  const names = await departmentNames(pool, codes);
  return workflows.map((w) => workflowJson(w, names));
}
