/**
 * Workflow administration use cases. `registerWorkflow` registers a version on chain (compact form + definition
 * hash) with its full definition off chain, in the same database transaction as the outbox record; the chain makes
 * it the active version of its type and deactivates the previous one. It does not validate: `createWorkflow` and
 * `updateWorkflow` (the administrator's POST and PUT) validate first, refuse an invalid definition before anything
 * is sent, and serialise changes per workflow type; `deactivateWorkflow` is the DELETE.
 */
import { randomUUID } from "node:crypto";
import type { Tx } from "../../db/queryable.ts";
import { audit, audited, type RequestMeta } from "../../stores/auditLog.ts";
import type { RecordedTx } from "../../chain/chainGateway.ts";
import { approvalRegistryCall } from "../../chain/contractCalls.ts";
import { stringToBytes32 } from "../../../../abis/index.ts";
import { AppError, conflict, notFound } from "../errors.ts";
import type { CreateWorkflowInput } from "../../routes/schemas/workflow.ts";
import type { DomainContext } from "../context.ts";
import { compileStages, definitionHash, sortedStages } from "./compileWorkflow.ts";
import { validateWorkflow } from "./validateWorkflow.ts";
import { insertWorkflowDefinition, type StoredWorkflow } from "../../stores/workflowStore.ts";
import { withWorkflowTypeLock } from "../../stores/workflowTypeLock.ts";
import { awaitingGovernance, isAwaitingGovernance, sendAsGovernance, type AwaitingGovernance } from "../governance.ts";

export interface RegisterOptions {
  /** Extra writes in the same database transaction as the outbox record and the definition (e.g. the audit row). */
  onRecorded?: (client: Tx, tx: RecordedTx, workflowId: string) => Promise<void>;
}

export async function registerWorkflow(
  context: DomainContext,
  input: CreateWorkflowInput,
  options: RegisterOptions = {},
): Promise<{ workflow: StoredWorkflow; transactionHash: string } | AwaitingGovernance> {
  const id = randomUUID();
  const hash = definitionHash(id, input);
  const validitySeconds = Math.round((context.config.licenceValidityDays[input.workflowType] ?? 365) * 86_400);
  const data = approvalRegistryCall("registerWorkflow", [
    stringToBytes32(input.workflowType),
    hash,
    BigInt(validitySeconds),
    compileStages(input.stages),
  ]);
  // A workflow version says which departments decide: governance registers it.
  if (!context.governance) return awaitingGovernance(context, data, `Version of the ${input.workflowType} workflow`);
  const tx = await sendAsGovernance(
    context,
    { kind: "REGISTER_WORKFLOW", to: context.contracts.ApprovalRegistry, data },
    {
      onRecorded: async (client, recorded) => {
        await insertWorkflowDefinition(client, {
          id,
          workflowType: input.workflowType,
          name: input.name,
          description: input.description ?? null,
          stages: sortedStages(input.stages),
          definitionHash: hash,
          validitySeconds,
          chainTxId: recorded.id,
        });
        if (options.onRecorded) await options.onRecorded(client, recorded, id);
      },
    },
  );
  if (!tx) throw new Error("governance key went away while registering a workflow");
  // The answer needs the chain's version and state from the index: give a lagging index a while longer, then say
  // plainly that the workflow is registered but not visible yet (never a 500 for a write that succeeded).
  for (const deadline = Date.now() + 30_000; ; await new Promise((r) => setTimeout(r, 100))) {
    const workflow = await context.workflows.byId(id);
    if (workflow) return { workflow, transactionHash: tx.hash };
    if (Date.now() > deadline) {
      throw new AppError(
        504,
        "INDEX_LAGGING",
        "The workflow is registered on chain but not visible yet; it will appear shortly",
        { workflowId: id, transactionHash: tx.hash },
      );
    }
  }
}

/** 400 INVALID_WORKFLOW with every problem in details.errors, before anything reaches the chain. */
async function assertValid(context: DomainContext, input: CreateWorkflowInput): Promise<void> {
  const { isValid, errors } = await validateWorkflow(context, input);
  if (!isValid) {
    throw new AppError(
      400,
      "INVALID_WORKFLOW",
      `The workflow definition is invalid: ${errors.map((e) => `${e.path}: ${e.code}`).join("; ")}`,
      { errors },
    );
  }
}

const summary = (input: CreateWorkflowInput) => ({
  workflowType: input.workflowType,
  name: input.name,
  stageCount: input.stages.length,
  departments: [...new Set(input.stages.flatMap((s) => s.requiredApprovals.map((a) => a.departmentCode)))],
});

/** POST /workflows: the first version of a type, or the next one after the type's workflow was deactivated. */
export async function createWorkflow(
  context: DomainContext,
  meta: RequestMeta,
  input: CreateWorkflowInput,
): Promise<StoredWorkflow | AwaitingGovernance> {
  await assertValid(context, input);
  return withWorkflowTypeLock(context.pool, input.workflowType, async () => {
    const state = await context.workflows.typeState(input.workflowType);
    if (state.activeChainWorkflowId !== null) {
      const active = await context.workflows.byChainId(state.activeChainWorkflowId);
      throw conflict(
        "CONFLICT",
        `${input.workflowType} already has an active workflow: create a new version with PUT /workflows/{workflowId}`,
        {
          workflowType: input.workflowType,
          ...(active ? { activeWorkflowId: active.id, activeVersion: active.version } : {}),
        },
      );
    }
    const registered = await registerWorkflow(context, input, {
      onRecorded: (client, tx, workflowId) =>
        audit(client, meta, {
          entityType: "WORKFLOW",
          entityId: workflowId,
          action: "CREATE",
          newValue: summary(input),
          txHash: tx.hash,
        }),
    });
    return isAwaitingGovernance(registered) ? registered : registered.workflow;
  });
}

/**
 * PUT /workflows/{id}: the next version of the same type, active at once (the chain deactivates the previous one;
 * requests already created stay pinned to theirs). Only the latest version of a type can be updated, so an edit
 * based on a superseded version never silently replaces a newer one.
 */
export async function updateWorkflow(
  context: DomainContext,
  meta: RequestMeta,
  workflowId: string,
  input: CreateWorkflowInput,
): Promise<StoredWorkflow | AwaitingGovernance> {
  const existing = await context.workflows.byId(workflowId);
  if (!existing) throw notFound("Workflow");
  if (input.workflowType !== existing.workflowType) {
    throw new AppError(
      400,
      "WORKFLOW_TYPE_MISMATCH",
      `Workflow ${workflowId} is a ${existing.workflowType} workflow: a new version keeps its type (got ${input.workflowType})`,
      {
        workflowType: existing.workflowType,
      },
    );
  }
  await assertValid(context, input);
  return withWorkflowTypeLock(context.pool, existing.workflowType, async () => {
    const state = await context.workflows.typeState(existing.workflowType);
    if (existing.version !== state.latestVersion) {
      const latest =
        state.activeChainWorkflowId !== null
          ? await context.workflows.byChainId(state.activeChainWorkflowId)
          : undefined;
      throw conflict(
        "STALE_WORKFLOW_VERSION",
        `Workflow ${workflowId} is version ${existing.version}, but version ${state.latestVersion} of ${existing.workflowType} exists: update the latest version`,
        {
          version: existing.version,
          latestVersion: state.latestVersion,
          ...(latest && latest.version === state.latestVersion ? { latestWorkflowId: latest.id } : {}),
        },
      );
    }
    const registered = await registerWorkflow(context, input, {
      onRecorded: (client, tx, newId) =>
        audit(client, meta, {
          entityType: "WORKFLOW",
          entityId: newId,
          action: "NEW_VERSION",
          oldValue: { workflowId: existing.id, version: existing.version, isActive: existing.isActive },
          newValue: { ...summary(input), previousWorkflowId: existing.id },
          txHash: tx.hash,
        }),
    });
    return isAwaitingGovernance(registered) ? registered : registered.workflow;
  });
}

/** DELETE /workflows/{id}: deactivates the version on chain; the type has no active workflow until a new one. */
export async function deactivateWorkflow(context: DomainContext, meta: RequestMeta, workflowId: string) {
  const existing = await context.workflows.byId(workflowId);
  if (!existing) throw notFound("Workflow");
  return withWorkflowTypeLock(context.pool, existing.workflowType, async () => {
    const current = (await context.workflows.byId(workflowId))!;
    if (!current.isActive) {
      throw conflict("WORKFLOW_INACTIVE", `Workflow ${workflowId} (version ${current.version}) is already inactive`, {
        workflowId,
        deactivatedAt: current.deactivatedAt?.toISOString() ?? null,
      });
    }
    const tx = await context.gateway.send(
      {
        kind: "DEACTIVATE_WORKFLOW",
        from: context.administrator,
        to: context.contracts.ApprovalRegistry,
        data: approvalRegistryCall("deactivateWorkflow", [current.chainWorkflowId]),
      },
      audited(meta, {
        entityType: "WORKFLOW",
        entityId: workflowId,
        action: "DEACTIVATE",
        oldValue: { isActive: true, version: current.version },
        newValue: { isActive: false, version: current.version },
      }),
    );
    const after = await context.workflows.byId(workflowId);
    return {
      workflowId,
      workflowType: current.workflowType,
      version: current.version,
      isActive: false as const,
      deactivatedAt: (after?.deactivatedAt ?? new Date()).toISOString(),
      transactionHash: tx.hash,
    };
  });
}
