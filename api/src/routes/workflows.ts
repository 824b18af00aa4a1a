/** Workflow administration routes (all admin): versions registered on chain, definitions kept off chain. */
import { z } from "zod/v4";
import type { DomainContext } from "../domain/context.ts";
import { createWorkflow, deactivateWorkflow, updateWorkflow } from "../domain/workflows/registerWorkflow.ts";
import { validateWorkflow } from "../domain/workflows/validateWorkflow.ts";
import { isAwaitingGovernance } from "../domain/governance.ts";
import { AwaitingGovernanceResponse } from "./schemas/common.ts";
import { workflowsJson } from "../reads/workflowView.ts";
import { notFound } from "../domain/errors.ts";
import type { MinedWrite } from "../http/idempotency.ts";
import { routeGroup, type RouteDefinition } from "../http/routeTable.ts";
import {
  CreateWorkflowInput,
  DeactivateWorkflowResponse,
  Workflow,
  WorkflowListResponse,
  WorkflowValidationResult,
} from "./schemas/workflow.ts";

const route = routeGroup({
  tags: ["Workflows"],
  access: [{ kind: "admin" }],
  responses: { 401: "Not authenticated", 403: "Not an administrator" },
});

const WorkflowIdParams = z.object({ workflowId: z.uuid() });

/** A workflow version says which departments decide: governance registers it (docs/decisions.md). */
const AWAITING_GOVERNANCE = {
  description:
    "AWAITING_GOVERNANCE: this API holds no governance key (a Safe governs): nothing was sent or recorded; `transaction` is the registration for governance to execute",
  schema: AwaitingGovernanceResponse,
};

export function workflowRoutes(context: DomainContext): RouteDefinition[] {
  const one = async (workflow: Parameters<typeof workflowsJson>[1][number]) =>
    (await workflowsJson(context.pool, [workflow]))[0];
  const stored = async (workflowId: string) => {
    const workflow = await context.workflows.byId(workflowId);
    if (!workflow) throw notFound("Workflow");
    return workflow;
  };
  /** The version a recorded registration wrote (same database transaction as its outbox record). */
  const registeredBy = async (write: MinedWrite) => {
    const workflow = await context.workflows.byChainTx(write.outboxTxId);
    if (!workflow) throw notFound("Workflow");
    return workflow;
  };

  return [
    route.get("/workflows", "listWorkflows", {
      summary: "List workflow versions",
      description:
        "Every registered version of every type (ordered by type, then version), or only the active (isActive=true) or inactive ones.",
      query: z.object({
        isActive: z
          .enum(["true", "false"])
          .optional()
          .describe("true: active versions only; false: inactive ones only"),
      }),
      responses: { 200: { description: "Workflows", schema: WorkflowListResponse }, 400: "Invalid query" },
      handler: async ({ query }) => {
        const workflows = await context.workflows.list(
          query.isActive === undefined ? {} : { isActive: query.isActive === "true" },
        );
        return { body: { workflows: await workflowsJson(context.pool, workflows) } };
      },
    }),
    route.post("/workflows", "createWorkflow", {
      sendsTransactions: true,
      summary:
        "Register a workflow for a request type (version 1, or the next version once the previous was deactivated)",
      description:
        "Validates the definition (400 INVALID_WORKFLOW with details.errors, nothing sent), then registers it on chain, where it becomes the active workflow of its type. A type has at most one active workflow: while it has one, use PUT to create a new version (409 CONFLICT). Honours Idempotency-Key.",
      body: CreateWorkflowInput,
      responses: {
        201: { description: "Registered", schema: Workflow },
        202: AWAITING_GOVERNANCE,
        400: "VALIDATION_ERROR (shape) or INVALID_WORKFLOW (rules; details.errors)",

        409: "CONFLICT: the type already has an active workflow",
        503: "Chain unavailable, nothing recorded",
      },
      handler: async ({ body, meta }) => {
        const created = await createWorkflow(context, meta, body);
        if (isAwaitingGovernance(created)) return { status: 202, body: created };
        return { body: await one(created) };
      },
      recoverIdempotent: async (_input, write) => ({ body: await one(await registeredBy(write)) }),
    }),
    route.post("/workflows/validate", "validateWorkflowDefinition", {
      summary: "Validate a candidate definition without registering it",
      description:
        "The checks POST and PUT apply, against the departments registered now. Problems are reported in the 200 body.",
      body: CreateWorkflowInput,
      idempotent: false,
      responses: {
        200: { description: "Validation result", schema: WorkflowValidationResult },
        400: "VALIDATION_ERROR (shape)",
      },
      handler: async ({ body }) => ({ body: await validateWorkflow(context, body) }),
    }),
    route.get("/workflows/:workflowId", "getWorkflow", {
      summary: "A workflow version",
      params: WorkflowIdParams,
      responses: { 200: { description: "The workflow", schema: Workflow }, 404: "No such workflow" },
      handler: async ({ params }) => ({ body: await one(await stored(params.workflowId)) }),
    }),
    route.put("/workflows/:workflowId", "updateWorkflow", {
      sendsTransactions: true,
      summary: "Create the next version of a workflow",
      description:
        "Registers the body as the next version of the same type (workflowType must not change: 400 WORKFLOW_TYPE_MISMATCH); it becomes the active version and the previous one is deactivated. Requests already created keep the version they were pinned to. Only the latest version of a type can be updated (409 STALE_WORKFLOW_VERSION). Returns the new version (its own workflowId). Honours Idempotency-Key.",
      params: WorkflowIdParams,
      body: CreateWorkflowInput,
      responses: {
        200: { description: "The new version", schema: Workflow },
        202: AWAITING_GOVERNANCE,
        400: "VALIDATION_ERROR, INVALID_WORKFLOW or WORKFLOW_TYPE_MISMATCH",

        404: "No such workflow",
        409: "STALE_WORKFLOW_VERSION",
        503: "Chain unavailable, nothing recorded",
      },
      handler: async ({ params, body, meta }) => {
        const updated = await updateWorkflow(context, meta, params.workflowId, body);
        if (isAwaitingGovernance(updated)) return { status: 202, body: updated };
        return { body: await one(updated) };
      },
      recoverIdempotent: async (_input, write) => ({ body: await one(await registeredBy(write)) }),
    }),
    route.delete("/workflows/:workflowId", "deactivateWorkflow", {
      sendsTransactions: true,
      summary: "Deactivate a workflow version",
      description:
        "Deactivates the version on chain. If it was the active version of its type, new requests of that type are refused (409 NO_ACTIVE_WORKFLOW) until a workflow is registered again (POST). Requests already pinned to it continue.",
      params: WorkflowIdParams,
      responses: {
        200: { description: "Deactivated", schema: DeactivateWorkflowResponse },

        404: "No such workflow",
        409: "WORKFLOW_INACTIVE: already inactive",
        503: "Chain unavailable, nothing recorded",
      },
      handler: async ({ params, meta }) => ({ body: await deactivateWorkflow(context, meta, params.workflowId) }),
    }),
    route.post("/workflows/:workflowId/validate", "validateWorkflow", {
      summary: "Validate a stored workflow against the current departments",
      description:
        "Re-checks the stored definition with the rules of POST/PUT against the departments as they are now (e.g. a department deactivated since). Stages are registered in stageOrder, one after the other, so there are no dependencies that could form a cycle: duplicate or missing orders are what is reported. Paths index the stages as stored (sorted by stageOrder).",
      params: WorkflowIdParams,
      idempotent: false,
      responses: {
        200: { description: "Validation result", schema: WorkflowValidationResult },

        404: "No such workflow",
      },
      handler: async ({ params }) => {
        const workflow = await stored(params.workflowId);
        return {
          body: await validateWorkflow(context, {
            workflowType: workflow.workflowType,
            name: workflow.name,
            description: workflow.description,
            stages: workflow.stages,
          }),
        };
      },
    }),
  ];
}
