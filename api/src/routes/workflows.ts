/** Workflow routes (STUB: replaced by the implementation). */
import type { DomainContext } from "../domain/context.ts";
import type { RouteDefinition } from "../http/routeTable.ts";

export function workflowRoutes(_context: DomainContext): RouteDefinition[] {
  return [];
}
