/**
 * Workflow definitions: the full JSON off chain (app.workflows), joined by definition hash with what the chain
 * says about that registration (index.workflows: chain id, version, active).
 */
import type pg from "pg";
import type { Db } from "../db/queryable.ts";
import { asDate, type ReadPart } from "../db/readTogether.ts";
import { insertRow } from "./insertRow.ts";
import type { WorkflowStageInput } from "../routes/schemas/workflow.ts";

export interface StoredWorkflow {
  id: string;
  workflowType: string;
  name: string;
  description: string;
  stages: WorkflowStageInput[];
  definitionHash: string;
  validitySeconds: number;
  chainWorkflowId: number;
  version: number;
  isActive: boolean;
  /** Registration time on chain (block timestamp). */
  createdAt: Date;
  /** The deactivation time once deactivated (on chain), else createdAt. */
  updatedAt: Date;
  deactivatedAt: Date | null;
}

/** What the chain says about a workflow type, whether or not its versions have a stored definition. */
export interface WorkflowTypeState {
  /** Chain id of the active version, if any. */
  activeChainWorkflowId: number | null;
  /** Highest version registered so far (0: none). */
  latestVersion: number;
}

const SELECT = `
  SELECT w.id, w.workflow_type, w.name, w.description, w.stages, w.definition_hash, w.validity_seconds, w.created_at,
         iw.workflow_id AS chain_workflow_id, iw.version, iw.active, iw.created_at AS registered_at, iw.deactivated_at
  FROM workflows w JOIN index.workflows iw ON iw.definition_hash = w.definition_hash`;

export function toWorkflow(row: Record<string, any>): StoredWorkflow {
  // Both times from the chain (block timestamps), so that updatedAt is never before createdAt.
  const createdAt = row.registered_at != null ? new Date(Number(row.registered_at) * 1000) : asDate(row.created_at);
  const deactivatedAt = row.deactivated_at != null ? new Date(Number(row.deactivated_at) * 1000) : null;
  return {
    id: row.id,
    workflowType: row.workflow_type,
    name: row.name,
    description: row.description ?? "",
    stages: row.stages,
    definitionHash: row.definition_hash,
    validitySeconds: Number(row.validity_seconds),
    chainWorkflowId: Number(row.chain_workflow_id),
    version: Number(row.version),
    isActive: row.active,
    createdAt,
    updatedAt: deactivatedAt ?? createdAt,
    deactivatedAt,
  };
}

/** The workflow registered on chain under an id, as a part of a combined read (`toWorkflow` its row). */
export const workflowByChainIdPart = (chainWorkflowId: number): ReadPart => ({
  sql: `${SELECT} WHERE iw.workflow_id = $1`,
  params: [chainWorkflowId],
});

export class WorkflowStore {
  readonly #pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  async active(workflowType: string): Promise<StoredWorkflow | undefined> {
    const { rows } = await this.#pool.query(
      `${SELECT} WHERE w.workflow_type = $1 AND iw.active ORDER BY iw.version DESC LIMIT 1`,
      [workflowType],
    );
    return rows[0] ? toWorkflow(rows[0]) : undefined;
  }

  async byId(id: string): Promise<StoredWorkflow | undefined> {
    const { rows } = await this.#pool.query(`${SELECT} WHERE w.id = $1`, [id]);
    return rows[0] ? toWorkflow(rows[0]) : undefined;
  }

  /** The version registered by an outbox transaction (its definition is written with the outbox record). */
  async byChainTx(outboxTxId: string): Promise<StoredWorkflow | undefined> {
    const { rows } = await this.#pool.query(`${SELECT} WHERE w.chain_tx_id = $1`, [outboxTxId]);
    return rows[0] ? toWorkflow(rows[0]) : undefined;
  }

  async byChainId(chainWorkflowId: number): Promise<StoredWorkflow | undefined> {
    const { rows } = await this.#pool.query(`${SELECT} WHERE iw.workflow_id = $1`, [chainWorkflowId]);
    return rows[0] ? toWorkflow(rows[0]) : undefined;
  }

  async typeState(workflowType: string): Promise<WorkflowTypeState> {
    const { rows } = await this.#pool.query(
      `SELECT max(version)::int AS latest, max(workflow_id) FILTER (WHERE active)::int AS active FROM index.workflows WHERE workflow_type = $1`,
      [workflowType],
    );
    return { activeChainWorkflowId: rows[0]?.active ?? null, latestVersion: rows[0]?.latest ?? 0 };
  }

  async list(filter: { isActive?: boolean } = {}): Promise<StoredWorkflow[]> {
    const { rows } = await this.#pool.query(
      `${SELECT} ${filter.isActive === undefined ? "" : "WHERE iw.active = $1"} ORDER BY w.workflow_type, iw.version`,
      filter.isActive === undefined ? [] : [filter.isActive],
    );
    return rows.map(toWorkflow);
  }
}

export interface NewWorkflowDefinition {
  id: string;
  workflowType: string;
  name: string;
  description: string | null;
  /** Sorted by stageOrder. */
  stages: WorkflowStageInput[];
  definitionHash: string;
  validitySeconds: number;
  /** The outbox record of its registration on chain. */
  chainTxId: string;
}

/** Records a workflow's full definition (the chain holds its compact form and the definition hash). */
export async function insertWorkflowDefinition(db: Db, workflow: NewWorkflowDefinition): Promise<void> {
  await insertRow(db, "workflows", { ...workflow, stages: JSON.stringify(workflow.stages) });
}
