/** Licence request routes: thin — validate (schemas), call the use case or read, shape the response. */
import { z } from "zod/v4";
import type { Principal } from "../auth/principal.ts";
import { cancelRequest, cancellationAnswer } from "../domain/requests/cancelRequest.ts";
import { createRequest } from "../domain/requests/createRequest.ts";
import { submissionAnswer, submitRequest } from "../domain/requests/submitRequest.ts";
import type { DomainContext } from "../domain/context.ts";
import { routeGroup, type RouteDefinition } from "../http/routeTable.ts";
import { requestDetail } from "../reads/requestDetail.ts";
import { requestCreatedBy, requestOfWrite, type RequestView } from "../reads/requestReads.ts";
import { findVisibleRequest } from "../domain/access.ts";
import { listRequests } from "../reads/requestList.ts";
import { timelineOf } from "../reads/timelineReads.ts";
import { RequestStatus, RequestType, pageQuery } from "./schemas/common.ts";
import {
  CancelInput,
  CancelResponse,
  CreateRequestInput,
  RequestDetailResponse,
  RequestListResponse,
  RequestResponse,
  SubmitResponse,
  TimelineResponse,
} from "./schemas/request.ts";

const route = routeGroup({ tags: ["Requests"], responses: { 401: "Not authenticated" } });

const RequestIdParams = z.object({ requestId: z.uuid() });

const READERS = [
  { kind: "applicant" as const },
  { kind: "client" as const, scope: "applications:read" as const },
  { kind: "apiKey" as const },
];
const WRITERS = [{ kind: "applicant" as const }, { kind: "client" as const, scope: "applications:write" as const }];

export function requestRoutes(context: DomainContext): RouteDefinition[] {
  const visible = async (requestId: string, ctx: { state: { principal?: Principal } }): Promise<RequestView> => {
    return findVisibleRequest(context.pool, ctx.state.principal, requestId);
  };

  return [
    route.post("/requests", "createRequest", {
      sendsTransactions: true,
      summary: "Create a licence request (mints its soulbound token)",
      description:
        "Mints a Draft soulbound token to the applicant's custodial address, pinned on chain to the active workflow version of the request type. An applicant creates requests for their own identity-locker id; a system client with applications:write only for an applicant who delegated to it (POST /delegations; 403 otherwise); an administrator for anyone. The applicant's name and e-mail (the name is published on the licence) come from the applicant's own sign-in, never from the body: metadata is stored as given and names no one. metadata is at most MAX_METADATA_BYTES (16 KiB) of JSON (400 METADATA_TOO_LARGE); an applicant creates at most REQUEST_QUOTA_PER_DAY requests in 24 hours (429 QUOTA_EXCEEDED). Honours Idempotency-Key.",
      access: WRITERS,
      body: CreateRequestInput,
      responses: {
        201: { description: "Created", schema: RequestResponse },
        400: "Invalid body; METADATA_TOO_LARGE",
        403: "applicantId is not yours (or has not delegated to this client)",
        409: "No active workflow for the type (NO_ACTIVE_WORKFLOW)",
        429: "QUOTA_EXCEEDED (or RATE_LIMITED)",
        503: "Chain unavailable, nothing recorded",
      },
      handler: async ({ body, principal, meta }) => ({ body: await createRequest(context, principal!, body, meta) }),
      // After a crash: the request row written with its mint (same transaction) gives back the original answer.
      recoverIdempotent: async (_input, write) => {
        const { requestId, requestNumber, createdAt } = await requestCreatedBy(context.pool, write.outboxTxId);
        return {
          body: { requestId, requestNumber, status: "DRAFT", transactionHash: write.transactionHash, createdAt },
        };
      },
    }),
    route.get("/requests", "listRequests", {
      summary: "List licence requests",
      description:
        "Applicants see their own requests; a system client with applications:read those of the applicants who delegated to it (POST /delegations); administrators all.",
      access: READERS,
      query: z.object({
        status: RequestStatus.optional(),
        requestType: RequestType.optional(),
        applicantId: z.string().max(128).optional(),
        ...pageQuery(20),
        sortBy: z.enum(["createdAt", "updatedAt", "status"]).default("createdAt"),
        sortOrder: z.enum(["asc", "desc"]).default("desc"),
      }),
      responses: { 200: { description: "A page of requests", schema: RequestListResponse }, 400: "Invalid query" },
      handler: async ({ query, principal }) => ({ body: await listRequests(context.pool, principal!, query) }),
    }),
    route.get("/requests/:requestId", "getRequest", {
      summary: "A licence request with its documents, approvals, current stage, timeline and chain data",
      access: READERS,
      params: RequestIdParams,
      responses: {
        200: { description: "The request", schema: RequestDetailResponse },
        404: "No such request (or not yours)",
      },
      handler: async ({ params, principal }) => ({
        body: await requestDetail(
          context.pool,
          await findVisibleRequest(context.pool, principal, params.requestId),
          context.contracts.LicenceToken,
        ),
      }),
    }),
    route.post("/requests/:requestId/submit", "submitRequest", {
      sendsTransactions: true,
      summary: "Submit (or resubmit) a request for review",
      description:
        "DRAFT → SUBMITTED: review starts at the first stage of the pinned workflow. PENDING_RESUBMISSION → SUBMITTED: review continues in the same stage. Every document type the workflow requires (the union of its requiredDocuments) must be uploaded. Honours Idempotency-Key.",
      access: WRITERS,
      params: RequestIdParams,
      responses: {
        200: { description: "Submitted", schema: SubmitResponse },
        400: "MISSING_DOCUMENTS with details.missingDocuments",
        404: "No such request",
        409: "INVALID_STATE: not a draft or awaiting resubmission",
      },
      handler: async ({ params, principal, meta }) => ({
        body: await submitRequest(context, principal!, params.requestId, meta),
      }),
      recoverIdempotent: async (_input, write) => ({
        body: await submissionAnswer(context, await requestOfWrite(context.pool, write), write.tx.hash),
      }),
    }),
    route.post("/requests/:requestId/cancel", "cancelRequest", {
      sendsTransactions: true,
      summary: "Cancel a draft or a request awaiting resubmission",
      access: WRITERS,
      params: RequestIdParams,
      body: CancelInput,
      responses: {
        200: { description: "Cancelled", schema: CancelResponse },
        404: "No such request",
        409: "INVALID_STATE",
      },
      handler: async ({ params, body, principal, meta }) => ({
        body: await cancelRequest(context, principal!, params.requestId, body.reason, meta),
      }),
      recoverIdempotent: async ({ params }, write) => ({ body: cancellationAnswer(params.requestId, write.tx.hash) }),
    }),
    route.get("/requests/:requestId/timeline", "getRequestTimeline", {
      summary: "The request's events in chronological order, each with its actor and transaction",
      access: READERS,
      params: RequestIdParams,
      responses: { 200: { description: "Timeline", schema: TimelineResponse }, 404: "No such request" },
      handler: async ({ params, ctx }) => {
        const request = await visible(params.requestId, ctx);
        return { body: { requestId: request.id, events: await timelineOf(context.pool, request) } };
      },
    }),
  ];
}
