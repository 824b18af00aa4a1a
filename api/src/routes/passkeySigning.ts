/** Passkey custody: a department's passkey account, and signing requests that collect its reviewers' assertions. */
import { z } from "zod/v4";
import type { AuthenticationResponseJSON } from "@simplewebauthn/server";
import { isAdmin, type Principal } from "../auth/principal.ts";
import type { DomainContext } from "../domain/context.ts";
import { openReviewerChange, startPasskeyCustody } from "../domain/passkeys/passkeyCustody.ts";
import {
  addAssertion,
  getSigningRequest,
  listSigningRequests,
  openDecisionSigning,
} from "../domain/passkeys/signingRequests.ts";
import { forbidden } from "../domain/errors.ts";
import { routeGroup, type RouteDefinition } from "../http/routeTable.ts";
import { AuthenticationResponse } from "./reviewers.ts";
import { DecisionToSignInput, decisionOf } from "./approvals.ts";

const route = routeGroup({
  tags: ["Console"],
  access: [{ kind: "apiKey" }],
  responses: { 401: "Not authenticated" },
});

const CodeParams = z.object({ departmentCode: z.string().min(1).max(64) });
const IdParams = z.object({ signingRequestId: z.uuid() });
const PublicKey = z
  .string()
  .regex(/^0x[0-9a-fA-F]{128}$/)
  .describe("A passkey's P-256 public key as the account stores it: 0x qx ‖ qy (64 bytes)");
const PasskeyId = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,1366}$/)
  .describe("A passkey's credential id (base64url)");

const SigningRequest = z
  .object({
    id: z.uuid(),
    kind: z.enum(["DECISION", "KEY_PROOF", "REVIEWER_CHANGE"]),
    status: z.enum(["COLLECTING", "SUBMITTED", "FAILED", "EXPIRED"]),
    requestId: z.uuid().optional().describe("DECISION: the licence request decided"),
    account: z.string().describe("The department's passkey account whose reviewers sign"),
    digest: z.string().describe("The 32 bytes signed: each assertion's WebAuthn challenge"),
    challenge: z.string().describe("The digest in base64url, as navigator.credentials.get takes it"),
    threshold: z.int().describe("How many reviewers must sign"),
    signatures: z.array(
      z.object({ reviewerId: z.uuid(), reviewerName: z.string(), passkeyId: z.string(), signedAt: z.string() }),
    ),
    allowCredentials: z
      .array(z.string())
      .describe("The signed-in reviewer's passkeys that may still sign it (reviewers of the account on chain)"),
    summary: z.record(z.string(), z.unknown()).describe("What is signed, in words a reviewer can check"),
    typedData: z
      .object({
        domain: z.record(z.string(), z.unknown()),
        types: z.record(z.string(), z.array(z.object({ name: z.string(), type: z.string() }))),
        primaryType: z.enum(["Decision", "DepartmentKey", "ReviewerChange"]),
        message: z.record(z.string(), z.unknown()),
      })
      .describe(
        "The EIP-712 typed data whose digest is signed: a client computes the digest from it (and shows its fields) instead of trusting `digest`",
      ),
    createdAt: z.string(),
    expiresAt: z.string(),
    transactionHash: z.string().optional(),
    failure: z.record(z.string(), z.unknown()).optional().describe("FAILED: the error the relay was refused with"),
    result: z.unknown().optional().describe("SUBMITTED: what the relayed operation answered"),
  })
  .meta({ id: "SigningRequest" });

type DepartmentPrincipal = Extract<Principal, { kind: "department" }>;

/** The department itself (API key, not a console session) or an administrator. */
function requireDepartmentOrAdmin(principal: Principal | undefined, code: string): void {
  if (isAdmin(principal)) return;
  if (principal?.kind === "department" && principal.code === code && !principal.reviewerId) return;
  throw forbidden("Only the department itself (its API key) or an administrator may change its passkey custody");
}

function reviewer(principal: Principal | undefined): DepartmentPrincipal {
  if (principal?.kind !== "department" || !principal.reviewerId)
    throw forbidden("Only a reviewer signed in to the console may do this");
  return principal;
}

function department(principal: Principal | undefined): DepartmentPrincipal {
  if (principal?.kind !== "department") throw forbidden("Not a department");
  return principal;
}

export function passkeySigningRoutes(context: DomainContext): RouteDefinition[] {
  return [
    route.post("/departments/:departmentCode/passkey-custody", "startPasskeyCustody", {
      sendsTransactions: true,
      idempotent: false,
      summary: "Move the department's wallet to a passkey account signed by its reviewers",
      description:
        "Deploys a DepartmentPasskeyAccount (the reviewed code of abis/build.json) whose signers are every active passkey of the department's active reviewers, `threshold` of them needed, and opens a KEY_PROOF signing request. When `threshold` reviewers have signed it in the console, the platform proposes the account as the department's wallet (DEPARTMENT_HELD); the change waits out the registry's public wallet delay and is activated with POST /departments/{departmentCode}/wallet-change/activate. Audited (DEPARTMENT DEPLOY_PASSKEY_ACCOUNT, OPEN_SIGNING_REQUEST).",
      tags: ["Departments"],
      access: [{ kind: "apiKey" }, { kind: "admin" }],
      params: CodeParams,
      body: z.object({ threshold: z.int().min(1).max(64) }).meta({ id: "PasskeyCustodyInput" }),
      responses: {
        202: {
          description: "Account deployed; the key proof waits for the reviewers' signatures",
          schema: z.object({
            account: z.object({ address: z.string(), threshold: z.int(), reviewers: z.array(PublicKey) }),
            signingRequest: SigningRequest,
          }),
        },
        400: "Invalid body",
        403: "Another department, or a console session",
        404: "No such department",
        409: "NOT_ENOUGH_REVIEWERS (fewer reviewers with a passkey than the threshold), ALREADY_PASSKEY_CUSTODY, CUSTODY_MOVE_IN_PROGRESS, DEPARTMENT_NOT_REGISTERED",
        503: "Chain unavailable, nothing recorded",
      },
      handler: async ({ params, body, principal, meta }) => {
        requireDepartmentOrAdmin(principal, params.departmentCode);
        return { body: await startPasskeyCustody(context, meta, params.departmentCode, body) };
      },
    }),
    route.post("/departments/:departmentCode/passkey-account/reviewer-changes", "openPasskeyReviewerChange", {
      idempotent: false,
      summary: "Ask the passkey account's reviewers to change who signs for the department",
      description:
        "Opens a REVIEWER_CHANGE signing request over the account's changeDigest: `add` names active passkeys of the department's reviewers, `remove` passkeys (by id, also removed ones) or keys; `threshold` is the threshold after the change (default: unchanged, or lowered to the reviewers left). The account's current reviewers sign it in the console; the platform then relays changeReviewers. Removing a reviewer off chain (DELETE /departments/{code}/reviewers/{id}) stops their console signing at once; this takes their key off the account. Audited (DEPARTMENT OPEN_SIGNING_REQUEST).",
      tags: ["Departments"],
      access: [{ kind: "apiKey" }, { kind: "admin" }],
      params: CodeParams,
      body: z
        .object({
          add: z.array(PasskeyId).max(64).default([]),
          remove: z
            .array(z.union([PublicKey, PasskeyId]))
            .max(64)
            .default([]),
          threshold: z.int().min(1).max(64).optional(),
        })
        .meta({ id: "PasskeyReviewerChangeInput" }),
      responses: {
        201: { description: "The signing request", schema: SigningRequest },
        400: "Invalid body; UNKNOWN_PASSKEYS; INVALID_THRESHOLD; a change that changes nothing",
        403: "Another department, or a console session",
        404: "No such department",
        409: "NOT_PASSKEY_CUSTODY, REVIEWER_EXISTS (adding a key the account has), REVIEWER_UNKNOWN (removing one it has not)",
        503: "Chain unavailable",
      },
      handler: async ({ params, body, principal, meta }) => {
        requireDepartmentOrAdmin(principal, params.departmentCode);
        return { body: await openReviewerChange(context, meta, params.departmentCode, body) };
      },
    }),
    route.post("/console/requests/:requestId/signing-requests", "openDecisionSigningRequest", {
      idempotent: false,
      summary: "Open a decision for the reviewers' passkeys to sign",
      description:
        "A reviewer signed in to the console of a department whose registered wallet is its passkey account: the body is the decision (as for decision-typed-data). The decision's EIP-712 digest is resolved now (stage, round, document versions, nonce) with a deadline 12 hours ahead, and the signing request collects the reviewers' assertions; when the account's threshold have signed, the platform relays it (decideBySig). Audited (DEPARTMENT OPEN_SIGNING_REQUEST).",
      params: z.object({ requestId: z.uuid() }),
      body: DecisionToSignInput,
      responses: {
        201: { description: "The signing request", schema: SigningRequest },
        400: "Invalid body; UNKNOWN_DOCUMENTS",
        403: "Not a reviewer signed in to the console",
        404: "No such request",
        409: "NOT_PASSKEY_CUSTODY: the department's wallet is not its passkey account",
        503: "Chain unavailable",
      },
      handler: async ({ params, body, principal, meta }) => {
        reviewer(principal);
        return { body: await openDecisionSigning(context, meta, params.requestId, decisionOf(body)) };
      },
    }),
    route.get("/console/signing-requests", "listSigningRequests", {
      summary: "The department's signing requests, newest first",
      query: z.object({
        status: z.enum(["COLLECTING", "SUBMITTED", "FAILED", "EXPIRED"]).optional(),
        limit: z.coerce.number().int().min(1).max(100).default(50),
      }),
      responses: {
        200: { description: "The signing requests", schema: z.object({ signingRequests: z.array(SigningRequest) }) },
        400: "Invalid query",
        403: "Not a department",
      },
      handler: async ({ query, principal }) => ({
        body: { signingRequests: await listSigningRequests(context, department(principal), query) },
      }),
    }),
    route.get("/console/signing-requests/:signingRequestId", "getSigningRequest", {
      summary: "One signing request of the department",
      params: IdParams,
      responses: {
        200: { description: "The signing request", schema: SigningRequest },
        403: "Not a department",
        404: "No such signing request here",
      },
      handler: async ({ params, principal }) => ({
        body: await getSigningRequest(context, department(principal), params.signingRequestId),
      }),
    }),
    route.post("/console/signing-requests/:signingRequestId/assertions", "signSigningRequest", {
      sendsTransactions: true,
      idempotent: false,
      summary: "Sign a signing request with your passkey",
      description:
        "The body is navigator.credentials.get's answer (AuthenticationResponseJSON) to the request's challenge. It is verified (challenge, origin, RP ID, user verification, counter), must be the signed-in reviewer's active passkey and a reviewer of the account on chain, and is stored; the signature that reaches the threshold relays the account's signature at once (a decision, the key proof's wallet change, or the reviewer change) and the answer is SUBMITTED with its transactionHash. One signature per reviewer. Audited (DEPARTMENT SIGN_SIGNING_REQUEST, SUBMIT_SIGNING_REQUEST or FAIL_SIGNING_REQUEST).",
      params: IdParams,
      body: z.object({ response: AuthenticationResponse }),
      responses: {
        200: { description: "Signed (and relayed when the threshold was reached)", schema: SigningRequest },
        400: "PASSKEY_INVALID: not a valid assertion over this digest (another challenge, a replay, another origin or RP ID, no user verification), or a removed passkey or one not on the account; nothing is stored",
        403: "Not a reviewer signed in to the console, another reviewer's passkey, or another department's request",
        404: "No such signing request",
        409: "ALREADY_SIGNED, SIGNING_REQUEST_CLOSED; a relay refused as stale (the decide use case's STALE_DECISION, STALE_NONCE, STALE_DOCUMENTS, ...): the request is FAILED",
        503: "Chain unavailable, nothing stored",
      },
      handler: async ({ params, body, principal, meta }) => {
        reviewer(principal);
        return {
          body: await addAssertion(
            context,
            meta,
            params.signingRequestId,
            body.response as unknown as AuthenticationResponseJSON,
          ),
        };
      },
    }),
  ];
}
