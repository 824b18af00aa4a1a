/** Passkey custody: a department's passkey account, and signing requests that collect its reviewers' assertions. */
import type { DomainContext } from "../domain/context.ts";
import type { RouteDefinition } from "../http/routeTable.ts";

export function passkeySigningRoutes(_context: DomainContext): RouteDefinition[] {
  return [];
}
