/** Approval routes (in progress). */
import type { DomainContext } from "../domain/context.ts";
import type { RouteDefinition } from "../http/routeTable.ts";

export function approvalRoutes(_context: DomainContext): RouteDefinition[] {
  return [];
}
