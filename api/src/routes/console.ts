/** The review console: its pages and assets at /console, and the reads it needs (queue, history) under /api/v1. */
import type { DomainContext } from "../domain/context.ts";
import type { RouteDefinition } from "../http/routeTable.ts";

export function consoleRoutes(_context: DomainContext): { api: RouteDefinition[]; root: RouteDefinition[] } {
  return { api: [], root: [] };
}
