/** Delegations: an applicant lets a named system client act for them (grant, list, revoke); a client lists its own. */
import { z } from "zod/v4";
import type { RequestMeta } from "../stores/auditLog.ts";
import type { Principal } from "../auth/principal.ts";
import type { DomainContext } from "../domain/context.ts";
import { grantDelegation, listDelegations, revokeDelegation } from "../domain/delegations/manageDelegations.ts";
import { routeGroup, type RouteDefinition } from "../http/routeTable.ts";
import { requestMeta } from "../http/requestMeta.ts";
import { ClientIdField, DelegationInput, DelegationListResponse, DelegationSchema } from "./schemas/delegation.ts";

const route = routeGroup({ tags: ["Authentication"], responses: { 401: "Not authenticated" } });

type ApplicantMeta = RequestMeta & { principal: Extract<Principal, { kind: "applicant" }> };

export function delegationRoutes(context: DomainContext): RouteDefinition[] {
  // The route table admits applicants only to the routes that change delegations.
  const applicantMeta = (ctx: Parameters<typeof requestMeta>[0]) => requestMeta(ctx) as ApplicantMeta;
  return [
    route.post("/delegations", "grantDelegation", {
      summary: "Let a system client act for you",
      description:
        "The applicant (their own identity-locker token) lets the system client act for them with the scopes it holds: create, submit and cancel their requests, upload their documents, read their requests. A system client sees and acts for no other applicant. Requests the client creates carry the name and e-mail of the applicant's sign-in at the time of this grant (granting again renews them). 201 when granted, 200 when it was already live. An unknown, revoked or administrator client: 404. Audited (APPLICANT DELEGATE).",
      access: [{ kind: "applicant" }],
      body: DelegationInput,
      responses: {
        200: { description: "Already granted (renewed)", schema: DelegationSchema },
        201: { description: "Granted", schema: DelegationSchema },
        400: "Invalid body",
        403: "Not an applicant",
        404: "No such client",
      },
      handler: async ({ body, ctx }) => {
        const { delegation, renewed } = await grantDelegation(context.pool, applicantMeta(ctx), body.clientId);
        return { status: renewed ? 200 : 201, body: delegation };
      },
    }),
    route.get("/delegations", "listDelegations", {
      summary: "Live delegations: yours (applicant), or those to you (system client)",
      access: [
        { kind: "applicant" },
        { kind: "client", scope: "applications:read" },
        { kind: "client", scope: "applications:write" },
        { kind: "client", scope: "documents:read" },
        { kind: "client", scope: "documents:write" },
      ],
      responses: {
        200: { description: "The delegations, oldest first", schema: DelegationListResponse },
        403: "Neither an applicant nor a client acting for applicants",
      },
      handler: async ({ principal }) => ({ body: { delegations: await listDelegations(context.pool, principal!) } }),
    }),
    route.delete("/delegations/:clientId", "revokeDelegation", {
      summary: "Stop a system client acting for you",
      description:
        "Ends the applicant's delegation at once: the client no longer sees or acts on their requests (what it already did stays). Audited (APPLICANT REVOKE_DELEGATION).",
      access: [{ kind: "applicant" }],
      params: z.object({ clientId: ClientIdField }),
      responses: { 204: "Revoked", 403: "Not an applicant", 404: "No live delegation to this client" },
      handler: async ({ params, ctx }) => {
        await revokeDelegation(context.pool, applicantMeta(ctx), params.clientId);
        return {};
      },
    }),
  ];
}
