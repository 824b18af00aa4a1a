/**
 * Checks the request use cases share before they change anything: the caller may act on the request, the request is
 * in a state that allows the action, and its pinned workflow has its definition.
 */
import type { Principal } from "../../auth/principal.ts";
import { conflict, notFound } from "../errors.ts";
import { findRequest, type RequestView } from "../../reads/requestReads.ts";
import { canActFor } from "../access.ts";
import type { StoredWorkflow } from "../../stores/workflowStore.ts";
import type { DomainContext } from "../context.ts";

/** The request, if this caller may act on it with `scope`; 404 otherwise. */
export async function loadOwnRequest(
  context: Pick<DomainContext, "pool">,
  principal: Principal,
  requestId: string,
  scope: "applications:write" | "documents:write",
): Promise<RequestView> {
  const request = await findRequest(context.pool, requestId);
  // Another applicant's request does not exist as far as this caller can tell.
  if (!request || !(await canActFor(context.pool, principal, request, scope))) throw notFound("Request");
  return request;
}

/** 409 INVALID_STATE: the request's status does not allow `action`. */
export const invalidState = (request: RequestView, action: string) =>
  conflict("INVALID_STATE", `Cannot ${action} a request in status ${request.status}`, {
    currentStatus: request.status,
  });

/**
 * A request is pinned to a workflow registered on chain whose definition this API stored in the same transaction:
 * a pinned workflow without one is a broken installation, not a caller's mistake (a 500, logged).
 */
export class WorkflowDefinitionMissingError extends Error {
  readonly chainWorkflowId: number;

  constructor(chainWorkflowId: number) {
    super(`pinned workflow ${chainWorkflowId} has no stored definition`);
    this.name = "WorkflowDefinitionMissingError";
    this.chainWorkflowId = chainWorkflowId;
  }
}

/** The definition of the workflow the request is pinned to. */
export async function pinnedWorkflow(
  context: Pick<DomainContext, "workflows">,
  request: RequestView,
): Promise<StoredWorkflow> {
  const workflow = await context.workflows.byChainId(request.chainWorkflowId);
  if (!workflow) throw new WorkflowDefinitionMissingError(request.chainWorkflowId);
  return workflow;
}
