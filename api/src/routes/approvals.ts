/**
 * Department decisions and the review views: pending requests, approve / reject / request changes (each signed by
 * the department's own wallet), the approvals of a request, and administrators' suspend / reinstate / revoke.
 */
import { z } from "zod/v4";
import type { Principal } from "../auth/principal.ts";
import {
  REJECTION_REASONS,
  decide,
  decisionToSign,
  type Decision,
  type DecisionSignature,
} from "../domain/approvals/decide.ts";
import { decisionAnswer, type DecisionKind } from "../domain/approvals/decisionAnswer.ts";
import { actOnLicence, licenceActionAnswer, type LicenceAction } from "../domain/approvals/licenceActions.ts";
import { escalationAnswer, resolveEscalation } from "../domain/approvals/resolveEscalation.ts";
import type { DomainContext } from "../domain/context.ts";
import { forbidden, validationFailed } from "../domain/errors.ts";
import type { MinedWrite } from "../http/idempotency.ts";
import { routeGroup, type RouteDefinition } from "../http/routeTable.ts";
import { approvalsOfToken } from "../reads/approvalReads.ts";
import { pendingRequestsPage } from "../reads/pendingReads.ts";
import { requestOfWrite } from "../reads/requestReads.ts";
import { findVisibleRequest } from "../domain/access.ts";
import { pageQuery } from "./schemas/common.ts";
import { CUSTODY_KINDS } from "./schemas/contractNames.ts";
import { ApprovalSchema, RequestListResponse } from "./schemas/request.ts";

const route = routeGroup({
  tags: ["Approvals"],
  access: [{ kind: "apiKey" }],
  responses: { 401: "Not authenticated" },
});

const RequestIdParams = z.object({ requestId: z.uuid() });
const ADMIN = [{ kind: "admin" as const }];

export const ApprovalResponse = z
  .object({
    approvalId: z.uuid(),
    status: z.enum(["APPROVED", "REJECTED", "CHANGES_REQUESTED"]),
    transactionHash: z.string(),
    workflowStatus: z.object({
      currentStage: z.string().describe("Name of the stage now current; empty once the review is closed"),
      isComplete: z.boolean().describe("true when this decision completed the last stage: the licence is issued"),
      nextPendingDepartments: z.array(z.string()).describe("Departments that can decide now"),
    }),
  })
  .meta({ id: "ApprovalResponse" });

const LicenceActionInput = z
  .object({ reasonCode: z.int().min(1).max(255).default(1), reason: z.string().max(1000).optional() })
  .meta({ id: "LicenceActionInput" });

const DECISION_ERRORS = {
  400: "Invalid body; reviewedDocuments names documents of another request (UNKNOWN_DOCUMENTS); your department holds its own key and sent no signature (SIGNATURE_REQUIRED); the signature is not your wallet's (INVALID_SIGNATURE), its deadline passed (SIGNATURE_EXPIRED) or is more than a day ahead (VALIDATION_ERROR)",
  403: "Not a department",
  404: "No such request",
  409: "NOT_PENDING (not required in the current stage), NOT_YOUR_TURN (sequential stage), ALREADY_DECIDED, INVALID_STATE (not under review), STALE_DOCUMENTS (a document you reviewed has a newer version: details.changedDocuments), STALE_NONCE (signed decisions: another decision of your department came first), STALE_DECISION (signed decisions: the review left the stage or round signed); nothing is recorded",
};

/** What every decision body may add: the versions reviewed, and a department-held key's signature. */
const ReviewFields = {
  reviewedDocuments: z.array(z.uuid()).max(16).optional(),
  documentVersions: z
    .record(z.uuid(), z.int().min(1).max(32767))
    .optional()
    .describe(
      "The version of each reviewed document you reviewed (default: its latest version when the call arrives); with no reviewedDocuments (every document covered), any document of the request. If any has a newer version when the decision is mined, nothing is recorded and the answer is 409 STALE_DOCUMENTS. With a signature, send the documentVersions of the typed data's answer: a version resolved later would not be the one signed.",
    ),
  signature: z
    .string()
    .regex(/^0x(?:[0-9a-fA-F]{2})+$/, "whole bytes of hex after 0x")
    .max(4096)
    .optional()
    .describe(
      "Departments that hold their own key: the signature of the typed data from POST /requests/{requestId}/decision-typed-data (65-byte ECDSA, or what an EIP-1271 wallet such as a Safe accepts), relayed on chain by the platform",
    ),
  nonce: z
    .string()
    .regex(/^\d{1,20}$/)
    .optional()
    .describe("With signature: the nonce of the signed typed data"),
  deadline: z.int().min(0).optional().describe("With signature: the deadline (unix seconds) of the signed typed data"),
  stage: z
    .int()
    .min(0)
    .max(255)
    .optional()
    .describe(
      "With signature: the stage of the signed typed data (the typed data's answer gives it; default: the current stage)",
    ),
  round: z
    .int()
    .min(0)
    .max(2 ** 40 - 1)
    .optional()
    .describe(
      "With signature: the round of the signed typed data (the stage's start time; default: the current round). A signature for another stage or round is 409 STALE_DECISION",
    ),
};

/**
 * A decision about to be signed, without signature: the body of decision-typed-data and of a console signing
 * request (the same decision, signed by an EIP-712 wallet or by reviewers' passkeys).
 */
export const DecisionToSignInput = z
  .object({
    decision: z.enum(["APPROVED", "REJECTED", "CHANGES_REQUESTED"]),
    remarks: z.string().min(1).max(4000),
    reason: z.enum(REJECTION_REASONS).optional(),
    requiredDocuments: z
      .array(z.string().regex(/^[A-Z0-9_]+$/))
      .max(16)
      .optional(),
    reviewedDocuments: ReviewFields.reviewedDocuments,
    documentVersions: ReviewFields.documentVersions,
  })
  .meta({ id: "DecisionTypedDataInput" });

/** The decision a DecisionToSignInput describes; a rejection needs its reason (400). */
export function decisionOf(body: z.infer<typeof DecisionToSignInput>): Decision {
  const base = {
    remarks: body.remarks,
    reviewedDocuments: body.reviewedDocuments,
    documentVersions: body.documentVersions,
  };
  if (body.decision === "APPROVED") return { kind: "APPROVED", ...base };
  if (body.decision === "REJECTED") {
    if (!body.reason) throw validationFailed("A rejection needs its reason", { fields: ["reason"] });
    return { kind: "REJECTED", reason: body.reason, ...base };
  }
  return { kind: "CHANGES_REQUESTED", requiredDocuments: body.requiredDocuments, ...base };
}

/**
 * A decision body as decide() takes it: the decision of `kind`, and the signature of a department-held key when
 * one was sent (with the nonce and deadline of the typed data signed).
 */
function signedDecision(
  kind: Decision["kind"],
  body: Omit<Decision, "kind"> & Partial<DecisionSignature>,
): [Decision, DecisionSignature | undefined] {
  const { signature, nonce, deadline, stage, round, ...fields } = body;
  const decision = { kind, ...fields } as Decision;
  if (signature === undefined) return [decision, undefined];
  if (nonce === undefined || deadline === undefined) {
    const message = "signature needs the nonce and deadline of the typed data that was signed";
    throw validationFailed(message, { fields: ["nonce", "deadline"] });
  }
  return [decision, { signature, nonce, deadline, stage, round }];
}

export function approvalRoutes(context: DomainContext): RouteDefinition[] {
  const department = (principal: Principal | undefined) => principal as Extract<Principal, { kind: "department" }>;
  /** A decision's answer rebuilt from its recorded, mined transaction (a retry after a crash). */
  const recoveredDecision = async (write: MinedWrite, kind: DecisionKind) => {
    const result = await decisionAnswer(context, await requestOfWrite(context.pool, write), kind, write.tx);
    return { body: kind === "CHANGES_REQUESTED" ? changesBody(result) : approvalBody(result) };
  };
  return [
    route.get("/requests/pending", "listPendingRequests", {
      summary: "Requests waiting for your department now",
      description:
        "Requests under review whose current stage needs the department now: it has not decided (or a document update requires it to review again) and, in a SEQUENTIAL stage, every department before it has approved. `department` must be the caller's own code.",
      query: z.object({ department: z.string().regex(/^[A-Z_]+$/), ...pageQuery(20) }),
      responses: {
        200: { description: "A page of requests", schema: RequestListResponse },
        403: "Another department's code",
      },
      handler: async ({ query, principal }) => {
        if (department(principal).code !== query.department)
          throw forbidden("You can only list your own department's pending requests");
        return { body: await pendingRequestsPage(context.pool, query.department, query.page, query.limit) };
      },
    }),
    route.post("/requests/:requestId/approve", "approveRequest", {
      sendsTransactions: true,
      summary: "Approve the request in its current stage (a transaction from your department's wallet)",
      description:
        "reviewedDocuments: ids of the request's documents you reviewed (their current versions are recorded on chain). remarks are kept off chain; their keccak256 is on chain. Honours Idempotency-Key.",
      params: RequestIdParams,
      body: z
        .object({ remarks: z.string().min(1).max(4000), ...ReviewFields, reviewedDocuments: z.array(z.uuid()).max(16) })
        .meta({ id: "ApproveInput" }),
      responses: { 200: { description: "Approval recorded", schema: ApprovalResponse }, ...DECISION_ERRORS },
      handler: async ({ params, body, meta }) => ({
        body: approvalBody(await decide(context, meta, params.requestId, ...signedDecision("APPROVED", body))),
      }),
      recoverIdempotent: (_input, write) => recoveredDecision(write, "APPROVED"),
    }),
    route.post("/requests/:requestId/reject", "rejectRequest", {
      sendsTransactions: true,
      summary: "Reject the request; the stage's onRejection applies (FAIL_REQUEST, RETRY_STAGE or ESCALATE)",
      params: RequestIdParams,
      body: z
        .object({ remarks: z.string().min(1).max(4000), reason: z.enum(REJECTION_REASONS), ...ReviewFields })
        .meta({ id: "RejectInput" }),
      responses: { 200: { description: "Rejection recorded", schema: ApprovalResponse }, ...DECISION_ERRORS },
      handler: async ({ params, body, meta }) => ({
        body: approvalBody(await decide(context, meta, params.requestId, ...signedDecision("REJECTED", body))),
      }),
      recoverIdempotent: (_input, write) => recoveredDecision(write, "REJECTED"),
    }),
    route.post("/requests/:requestId/request-changes", "requestChanges", {
      sendsTransactions: true,
      summary: "Ask the applicant for changes: the request goes to PENDING_RESUBMISSION",
      description:
        "Your approval record becomes CHANGES_REQUESTED; after the applicant resubmits, your department decides again in the same stage.",
      params: RequestIdParams,
      body: z
        .object({
          remarks: z.string().min(1).max(4000),
          requiredDocuments: z
            .array(z.string().regex(/^[A-Z0-9_]+$/))
            .max(16)
            .optional(),
          ...ReviewFields,
        })
        .meta({ id: "RequestChangesInput" }),
      responses: {
        200: { description: "Recorded", schema: z.object({ status: z.string(), transactionHash: z.string() }) },
        ...DECISION_ERRORS,
      },
      handler: async ({ params, body, meta }) => ({
        body: changesBody(await decide(context, meta, params.requestId, ...signedDecision("CHANGES_REQUESTED", body))),
      }),
      recoverIdempotent: (_input, write) => recoveredDecision(write, "CHANGES_REQUESTED"),
    }),
    route.post("/requests/:requestId/decision-typed-data", "getDecisionTypedData", {
      idempotent: false,
      summary: "The EIP-712 typed data your department signs to decide with its own key",
      description:
        "For departments that hold their own key (custody DEPARTMENT_HELD): the body is the decision you are about to send (as for approve / reject / request-changes, without signature). The answer is the typed data to sign with eth_signTypedData_v4 (any wallet, or a Safe for EIP-1271), in the registry's EIP-712 domain as its eip712Domain() gives it (with the deployment's salt): the request's current stage and round, the SHA-256 of each reviewed document's version resolved now (`documents`), your department's next nonce and a deadline 15 minutes ahead. Send the same decision with signature, nonce, deadline, stage, round and the answer's documentVersions to the decision endpoint (so that a document updated since you signed is answered 409 STALE_DOCUMENTS, and a stage left since 409 STALE_DECISION); any later decision of your department uses up the nonce (409 STALE_NONCE); the platform relays it and the contract checks the signature against your department's registered wallet. Reads only: nothing is recorded.",
      params: RequestIdParams,
      body: DecisionToSignInput,
      responses: {
        200: {
          description: "The typed data to sign",
          schema: z
            .object({
              typedData: z.object({
                types: z.record(z.string(), z.array(z.object({ name: z.string(), type: z.string() }))),
                primaryType: z.literal("Decision"),
                domain: z.object({
                  name: z.string(),
                  version: z.string(),
                  chainId: z.number(),
                  verifyingContract: z.string(),
                  salt: z.string().describe("The deployment's salt (bytes32), from the registry's eip712Domain()"),
                }),
                message: z.record(z.string(), z.union([z.string(), z.number(), z.array(z.string())])),
              }),
              signer: z
                .string()
                .describe("Your department's registered wallet: the address whose signature the contract accepts"),
              custody: z.enum(CUSTODY_KINDS),
              documentVersions: z.record(z.string(), z.number()).describe("The document versions the decision covers"),
              stage: z.number().describe("The stage signed: send it back with the signature"),
              round: z.number().describe("The stage's round signed (its start time): send it back with the signature"),
              nonce: z.string(),
              deadline: z.number(),
            })
            .meta({ id: "DecisionTypedData" }),
        },
        400: "Invalid body; a rejection needs its reason",
        403: "Not a department",
        404: "No such request",
      },
      handler: async ({ params, body, principal }) => ({
        body: await decisionToSign(context, department(principal), params.requestId, decisionOf(body)),
      }),
    }),
    route.get("/requests/:requestId/approvals", "listApprovals", {
      summary: "Every department decision on the request",
      description:
        "includeInvalidated=true also lists decisions no longer standing: approvals a document update invalidated (status REVIEW_REQUIRED), superseded decisions, and stage retries.",
      access: [{ kind: "applicant" }, { kind: "client", scope: "applications:read" }, { kind: "apiKey" }],
      params: RequestIdParams,
      query: z.object({ includeInvalidated: z.enum(["true", "false"]).default("false") }),
      responses: {
        200: {
          description: "Approvals",
          schema: z.object({ requestId: z.string(), approvals: z.array(ApprovalSchema) }),
        },
        404: "No such request",
      },
      handler: async ({ params, query, principal }) => {
        const request = await findVisibleRequest(context.pool, principal, params.requestId);
        const approvals = await approvalsOfToken(context.pool, request.tokenId, query.includeInvalidated === "true");
        return { body: { requestId: request.id, approvals: approvals.map(({ stage: _stage, ...a }) => a) } };
      },
    }),
    route.post("/requests/:requestId/resolve-escalation", "resolveEscalation", {
      sendsTransactions: true,
      summary: "Resolve an escalated stage: uphold the rejection, or return it to the department",
      description:
        "Administrators only. A stage is escalated by a rejection whose stage says onRejection ESCALATE, or by an overdue stage with onTimeout ESCALATE; documents are frozen meanwhile. REJECT rejects the request (reasonCode on chain); RETURN sends it back: a rejecting department decides again and the stage's clock restarts. An administrator cannot approve for a department.",
      access: ADMIN,
      params: RequestIdParams,
      body: z
        .object({
          decision: z.enum(["REJECT", "RETURN"]),
          reasonCode: z.int().min(1).max(255).default(5),
          remarks: z.string().max(4000).optional(),
        })
        .meta({ id: "ResolveEscalationInput" }),
      responses: {
        200: {
          description: "Resolved",
          schema: z.object({ requestId: z.string(), status: z.string(), transactionHash: z.string() }),
        },
        403: "Not an administrator",
        404: "No such request",
        409: "NOT_ESCALATED",
      },
      handler: async ({ params, body, meta }) => ({
        body: await resolveEscalation(context, meta, params.requestId, body.decision, body.reasonCode, body.remarks),
      }),
      recoverIdempotent: async ({ params }, write) => ({
        body: await escalationAnswer(context, params.requestId, write.tx.hash),
      }),
    }),
    ...(["suspend", "reinstate", "revoke"] as const).map((verb) =>
      route.post(`/requests/:requestId/${verb}`, `${verb}Licence`, {
        sendsTransactions: true,
        summary: {
          suspend: "Suspend an issued licence",
          reinstate: "Lift a suspension",
          revoke: "Revoke a licence for good",
        }[verb],
        description:
          "Administrators only; recorded on chain (transaction kind REVOKE). reasonCode (1-255) is stored on chain with the status; reason (text) off chain. A suspended or revoked licence verifies as invalid.",
        tags: ["Licences"],
        access: ADMIN,
        params: RequestIdParams,
        body: LicenceActionInput,
        responses: {
          200: {
            description: "Done",
            schema: z.object({ requestId: z.string(), status: z.string(), transactionHash: z.string() }),
          },
          403: "Not an administrator",
          404: "No such request",
          409: "INVALID_STATE",
        },
        handler: async ({ params, body, meta }) => ({
          body: await actOnLicence(context, meta, params.requestId, actionOf(verb), body.reasonCode, body.reason),
        }),
        recoverIdempotent: async ({ params }, write) => ({
          body: licenceActionAnswer(params.requestId, actionOf(verb), write.tx.hash),
        }),
      }),
    ),
  ];
}

/** The spec's ApprovalResponse for a recorded approval or rejection. */
function approvalBody(result: Awaited<ReturnType<typeof decisionAnswer>>) {
  const { approvalId, status, transactionHash, workflowStatus } = result;
  return { approvalId, status, transactionHash, workflowStatus };
}

/** The answer to a request for changes: the request's status and the transaction. */
function changesBody(result: Awaited<ReturnType<typeof decisionAnswer>>) {
  return { status: result.requestStatus, transactionHash: result.transactionHash };
}

const actionOf = (verb: "suspend" | "reinstate" | "revoke") => verb.toUpperCase() as LicenceAction;
