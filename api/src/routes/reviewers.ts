/** Reviewers of a department: invitations, passkey registration, console sign-in and sessions. */
import type { DomainContext } from "../domain/context.ts";
import type { RouteDefinition } from "../http/routeTable.ts";

export function reviewerRoutes(_context: DomainContext): RouteDefinition[] {
  return [];
}
