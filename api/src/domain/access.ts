/**
 * Who may see or act on a licence request: the one access policy every route and use case asks, so that a caller
 * who may not see a request gets the same 404 as for one that does not exist.
 */
import { isAdmin, type Principal } from "../auth/principal.ts";
import type { DbPool } from "../db/queryable.ts";
import { isRoutedTo } from "../reads/pendingReads.ts";
import { findRequest, type RequestView } from "../reads/requestReads.ts";
import { liveDelegation } from "../stores/delegationStore.ts";
import { notFound } from "./errors.ts";

/**
 * Whether the caller may see the request: its applicant; an administrator; a system client with the scope that the
 * applicant delegated to; a department the request is routed to (submitted, and its pinned workflow lists it).
 */
export async function canSee(
  pool: DbPool,
  principal: Principal | undefined,
  request: RequestView,
  scope: "applications:read" | "documents:read",
): Promise<boolean> {
  if (!principal) return false;
  if (principal.kind === "applicant") return principal.id === request.applicantId;
  if (principal.kind === "client") return actsForApplicant(pool, principal, request.applicantId, scope);
  return isRoutedTo(pool, request.tokenId, principal.code);
}

/**
 * Whether a client may use `scope` for the applicant: an administrator for anyone; a system client holding the scope
 * only while the applicant's delegation to it is live.
 */
export async function actsForApplicant(
  pool: DbPool,
  principal: Extract<Principal, { kind: "client" }>,
  applicantId: string,
  scope: "applications:read" | "applications:write" | "documents:read" | "documents:write",
): Promise<boolean> {
  if (isAdmin(principal)) return true;
  if (!principal.scopes.includes(scope)) return false;
  return (await liveDelegation(pool, principal.id, applicantId)) !== undefined;
}

/** The request if the caller may see it (`canSee`); otherwise 404, so that its existence is not revealed. */
export async function findVisibleRequest(
  pool: DbPool,
  principal: Principal | undefined,
  id: string,
  scope: "applications:read" | "documents:read" = "applications:read",
): Promise<RequestView> {
  const request = await findRequest(pool, id);
  if (!request || !(await canSee(pool, principal, request, scope))) throw notFound("Request");
  return request;
}

/** Whether the caller may act for the request's applicant (submit, cancel, upload). */
export async function canActFor(
  pool: DbPool,
  principal: Principal | undefined,
  request: RequestView,
  scope: "applications:write" | "documents:write",
): Promise<boolean> {
  if (!principal) return false;
  if (principal.kind === "applicant") return principal.id === request.applicantId;
  if (principal.kind === "client") return actsForApplicant(pool, principal, request.applicantId, scope);
  return false;
}
