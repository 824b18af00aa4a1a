/**
 * The authorization matrix (docs/authorization-matrix.md) against the running API: every endpoint × every kind of
 * caller, each cell's status as the table says. The table must have exactly one row per route of the live route
 * table (the OpenAPI document), so a new route without a row fails here.
 *
 * Cells run concurrently (a bounded pool). Cells expected to succeed on something they change for good get a fresh
 * fixture of their own; rows whose successes depend on each other (suspend → reinstate → revoke; workflow PUT →
 * DELETE → POST) run in that order, after every other row.
 */
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { expect } from "chai";
import {
  applicantCode,
  applicantToken,
  authorizeParams,
  clientToken,
  createClient,
  exchangeFields,
  TEST_REDIRECT_URI,
} from "./support/authClient.ts";
import { createDepartment, departmentClient, type CreatedTestDepartment } from "./support/departmentClient.ts";
import { eventually } from "./support/eventually.ts";
import { apiClient, type HttpResult, type Json } from "./support/httpClient.ts";
import { parseMarkdownTable } from "./support/markdownTable.ts";
import { loadOperations, undocumentedAnswer } from "./support/openApiOperations.ts";
import { pdf } from "./support/sampleFiles.ts";
import { adminSession, letters } from "./support/sessions.ts";
import { current } from "./support/stackFixture.ts";
import { stage, workflow } from "./support/workflowDefinition.ts";
import { authenticationResponse, createSoftwarePasskey, registrationResponse } from "./support/softwarePasskey.ts";
import { startReceiver, type Receiver } from "./support/webhookReceiver.ts";
import { registerWorkflowVersion, workflowVersions } from "./support/workflowAdmin.ts";

const MATRIX_FILE = new URL("../../docs/authorization-matrix.md", import.meta.url);
const SCOPE_CALLERS = [
  "applications:read",
  "applications:write",
  "documents:read",
  "documents:write",
  "verification:read",
] as const;
const CALLERS = [
  "anonymous",
  "applicant",
  "other applicant",
  "department",
  "other department",
  "admin",
  ...SCOPE_CALLERS,
] as const;
type Caller = (typeof CALLERS)[number];
const HTTP_METHODS = ["get", "post", "put", "patch", "delete"];
/** Cells in flight at once: enough to overlap chain writes, few enough for a 2-core CI machine. */
const CONCURRENCY = 12;

interface MatrixRow {
  endpoint: string;
  expected: Record<Caller, number>;
}

/** The table, read when the file loads so that each row becomes its own test. */
function readMatrix(): { rows: MatrixRow[]; problems: string[] } {
  const problems: string[] = [];
  const table = parseMarkdownTable(readFileSync(MATRIX_FILE, "utf8"));
  const columns = table.header.slice(1);
  if (table.header[0] !== "Endpoint") problems.push(`first column must be "Endpoint", is "${table.header[0]}"`);
  if (JSON.stringify(columns) !== JSON.stringify(CALLERS))
    problems.push(`caller columns must be exactly ${CALLERS.join(", ")}; the table has ${columns.join(", ")}`);
  const rows = table.rows.map((cells) => {
    const endpoint = cells[0].replaceAll("`", "").trim();
    const expected = {} as Record<Caller, number>;
    CALLERS.forEach((caller, i) => {
      const cell = cells[i + 1] ?? "";
      if (!/^[1-5]\d\d$/.test(cell)) problems.push(`${endpoint} / ${caller}: "${cell}" is not an HTTP status`);
      expected[caller] = Number(cell);
    });
    return { endpoint, expected };
  });
  return { rows, problems };
}

/** One HTTP call of a cell; the caller's credentials are added when it is sent. */
interface Call {
  method: string;
  /** Path and query, from the root (e.g. /api/v1/requests/…). */
  path: string;
  json?: unknown;
  form?: Record<string, string>;
  upload?: { bytes: Buffer; filename: string; fields: Record<string, string> };
}

interface RowDriver {
  /** The request for this caller; `allowed`: the table expects success (2xx), so use a fixture it may change. */
  build(caller: Caller, allowed: boolean): Promise<Omit<Call, "method">> | Omit<Call, "method">;
  /** Rows run by ascending order (same order: together). */
  order?: number;
  /** Cells of this row one after another (in column order) instead of together. */
  sequential?: boolean;
}

interface Outcome {
  status?: number;
  body?: string;
  headers?: Headers;
  json?: unknown;
  error?: string;
}

describe("authorization matrix: every endpoint × every caller (docs/authorization-matrix.md, real stack)", function () {
  const matrix = readMatrix();
  const run = `${Date.now() % 1e8}`;
  const tag = letters(run);
  const ownerId = `authz-owner-${run}`;
  const outcomes = new Map<string, Outcome>();
  const cellKey = (endpoint: string, caller: Caller) => `${endpoint} | ${caller}`;

  let api: string;
  let adminToken: string;
  const tokens = {} as Record<Caller, string>;
  let department: CreatedTestDepartment;
  let otherDepartment: CreatedTestDepartment;
  let regenerated: CreatedTestDepartment;
  let verificationClient: { clientId: string; clientSecret: string };
  let probeClientId: string;
  /** Clients of the scope callers by scope: the fixture's applicant delegates to each one that acts for applicants. */
  const scopeClientIds = {} as Record<(typeof SCOPE_CALLERS)[number], string>;
  let receiver: Receiver;
  let owner: ReturnType<typeof apiClient>;
  let admin: ReturnType<typeof apiClient>;
  let asDepartment: ReturnType<typeof departmentClient>;
  let workflowDefinition: Json;
  let workflowId: string;
  let codeCounter = 0;
  let fileCounter = 0;

  /** Shared fixtures; cells that change them for good get fresh ones instead (see the drivers). */
  const fx = {} as {
    main: { id: string; documentId: string; hash: string };
    issued: { id: string; tokenId: number; qrPayload: string; credential: string };
    escalated: { id: string };
    probeDraft: string;
    probeDraftWithDocument: string;
    update: { id: string; documentId: string };
    webhookId: string;
    fileUrl: string;
  };

  const must = (result: HttpResult, status: number, what: string) => {
    if (result.status !== status)
      throw new Error(`${what}: expected ${status}, got ${result.status} ${JSON.stringify(result.body)}`);
    return result.body;
  };
  const uniquePdf = () => pdf(`authorization matrix ${run} file ${++fileCounter}`);
  const newCode = () =>
    `AZ_N_${tag}_${(++codeCounter).toString(26).replace(/./g, (c) => String.fromCharCode(65 + parseInt(c, 26)))}`;

  async function draft(): Promise<string> {
    return must(
      await owner.post("/requests", { applicantId: ownerId, requestType: "BUILDING_PERMIT" }),
      201,
      "create request",
    ).requestId;
  }
  async function addDocument(id: string): Promise<string> {
    return must(
      await owner.upload("POST", `/requests/${id}/documents`, uniquePdf(), "site-plan.pdf", { docType: "SITE_PLAN" }),
      201,
      "upload",
    ).documentId;
  }
  async function draftWithDocument() {
    const id = await draft();
    return { id, documentId: await addDocument(id) };
  }
  async function submitted() {
    const request = await draftWithDocument();
    must(await owner.post(`/requests/${request.id}/submit`), 200, "submit");
    return request;
  }
  async function departmentWebhook(): Promise<string> {
    // A URL of its own each time: a department may not register one URL twice.
    const body = {
      url: `${receiver.url}/${randomUUID()}`,
      events: ["certificate.revoked"],
      secret: `authorization-matrix-secret-${run}`,
    };
    return must(await asDepartment.post("/webhooks", body), 201, "webhook").webhookId;
  }

  const requestPath = (id: string, rest = "") => `/api/v1/requests/${id}${rest}`;
  /** A department of its own with a wallet change proposed (cancel and activate cells change it for good). */
  async function proposedWalletChange(): Promise<string> {
    const { code } = await createDepartment(api, adminToken, {
      code: newCode(),
      name: "Authorization matrix, wallet change",
    });
    must(
      await admin.post(`/departments/${code}/wallet-change`, { custody: "CUSTODIAL" }),
      200,
      "propose a wallet change",
    );
    return code;
  }
  const licenceAction = (verb: string, order: number): RowDriver => ({
    order,
    build: () => ({
      path: requestPath(fx.issued.id, `/${verb}`),
      json: { reasonCode: 3, reason: `authorization matrix: ${verb}` },
    }),
  });
  const plain = (path: string): RowDriver => ({ build: () => ({ path }) });
  /** A fresh OID4VCI offer of the issued licence, made by its applicant: its pre-authorized code. */
  const offeredCode = async (): Promise<string> => {
    const response = await fetch(`${api}${requestPath(fx.issued.id, "/credential-offer")}`, {
      method: "POST",
      headers: { authorization: `Bearer ${tokens.applicant}` },
    });
    expect(response.status).to.equal(201);
    const { credentialOffer } = await response.json();
    return credentialOffer.grants["urn:ietf:params:oauth:grant-type:pre-authorized_code"]["pre-authorized_code"];
  };

  /** A reviewer invited by the fixture department: the link's token and the ceremony's origin and RP ID. */
  async function reviewerInvitation(name: string) {
    const body = must(
      await asDepartment.post(`/departments/${department.code}/reviewer-invitations`, { name }),
      201,
      "invite a reviewer",
    );
    const url = new URL(body.invitationUrl);
    return {
      reviewerId: body.reviewerId as string,
      token: url.hash.split("/invite/")[1]!,
      ceremony: { origin: url.origin, rpId: url.hostname },
    };
  }
  /** An invited reviewer who registered a software passkey. */
  async function registeredReviewer(name: string) {
    const { reviewerId, token, ceremony } = await reviewerInvitation(name);
    const passkey = createSoftwarePasskey();
    const anonymous = apiClient(api);
    const options = must(
      await anonymous.post("/console/invitations/registration-options", { token, deviceName: "Matrix" }),
      200,
      "registration options",
    ).options;
    must(
      await anonymous.post("/console/invitations/register", {
        token,
        response: registrationResponse(passkey, options, ceremony),
      }),
      201,
      "register a passkey",
    );
    return { reviewerId, passkey, ceremony };
  }
  /** The reviewer whose passkey signs in (one after another: its counter only goes up) and whom refusals name. */
  let fixtureReviewer: ReturnType<typeof registeredReviewer> | undefined;
  const reviewerFixture = () => (fixtureReviewer ??= registeredReviewer("Matrix reviewer"));
  /** A department of its own with a reviewer who registered a passkey (a passkey custody move changes it). */
  async function departmentWithReviewer(): Promise<string> {
    const fresh = await createDepartment(api, adminToken, { code: newCode(), name: "Authorization matrix, passkeys" });
    const invited = must(
      await departmentClient(api, fresh).post(`/departments/${fresh.code}/reviewer-invitations`, { name: "Pia" }),
      201,
      "invite a reviewer",
    );
    const url = new URL(invited.invitationUrl);
    const token = url.hash.split("/invite/")[1]!;
    const anonymous = apiClient(api);
    const options = must(
      await anonymous.post("/console/invitations/registration-options", { token, deviceName: "Matrix" }),
      200,
      "registration options",
    ).options;
    const ceremony = { origin: url.origin, rpId: url.hostname };
    must(
      await anonymous.post("/console/invitations/register", {
        token,
        response: registrationResponse(createSoftwarePasskey(), options, ceremony),
      }),
      201,
      "register a passkey",
    );
    return fresh.code;
  }
  /** The fixture department's signing request (its key proof, opened by the passkey-custody row). */
  async function departmentSigningRequest(): Promise<{ id: string; challenge: string }> {
    const listed = must(await asDepartment.get("/console/signing-requests"), 200, "signing requests");
    if (!listed.signingRequests[0]) throw new Error("the passkey-custody row opened no signing request");
    return listed.signingRequests[0];
  }

  /** One driver per row of the table: the well-formed request each caller sends. */
  const drivers: Record<string, RowDriver> = {
    "GET /.well-known/jwks.json": plain("/.well-known/jwks.json"),
    "GET /": plain("/"),
    "GET /verify": plain("/verify"),
    "GET /verify/app.js": plain("/verify/app.js"),
    "GET /verify/app.css": plain("/verify/app.css"),
    "GET /console": plain("/console"),
    "GET /console/app.js": plain("/console/app.js"),
    "GET /console/api.js": plain("/console/api.js"),
    "GET /console/views.js": plain("/console/views.js"),
    "GET /console/documents.js": plain("/console/documents.js"),
    "GET /console/app.css": plain("/console/app.css"),
    "GET /console/vendor/simplewebauthn-browser.js": plain("/console/vendor/simplewebauthn-browser.js"),
    "GET /console/vendor/ethers.min.js": plain("/console/vendor/ethers.min.js"),
    "GET /console/vendor/pdf.min.mjs": plain("/console/vendor/pdf.min.mjs"),
    "GET /console/vendor/pdf.worker.min.mjs": plain("/console/vendor/pdf.worker.min.mjs"),

    "POST /api/v1/auth/token": {
      build: () => ({
        path: "/api/v1/auth/token",
        form: {
          grant_type: "client_credentials",
          client_id: verificationClient.clientId,
          client_secret: verificationClient.clientSecret,
        },
      }),
    },
    "POST /api/v1/admin/clients": {
      build: () => ({
        path: "/api/v1/admin/clients",
        json: { name: `authz created ${run}`, scopes: ["verification:read"] },
      }),
    },
    "GET /api/v1/admin/clients": plain("/api/v1/admin/clients"),
    "DELETE /api/v1/admin/clients/{clientId}": {
      build: async (_caller, allowed) => ({
        path: `/api/v1/admin/clients/${allowed ? (await createClient(api, adminToken, `authz revoked ${run}`, ["verification:read"])).clientId : probeClientId}`,
      }),
    },
    "GET /api/v1/auth/identitylocker/authorize": {
      build: () => ({
        path: `/api/v1/auth/identitylocker/authorize?${authorizeParams({ redirect_uri: TEST_REDIRECT_URI, state: `state-${run}`, login_hint: `authz-signin-${run}` }).query}`,
      }),
    },
    "GET /api/v1/auth/identitylocker/callback": {
      build: () => ({
        path: `/api/v1/auth/identitylocker/callback?${new URLSearchParams({ state: `state-${run}`, code: `code-${run}` })}`,
      }),
    },
    "POST /api/v1/auth/identitylocker/token": {
      build: async () => ({
        path: "/api/v1/auth/identitylocker/token",
        json: exchangeFields(await applicantCode(api, { id: `authz-signin-${run}` })),
      }),
    },

    "GET /api/v1/requests/pending": {
      build: () => ({ path: `/api/v1/requests/pending?department=${department.code}` }),
    },
    "POST /api/v1/requests/{requestId}/approve": {
      build: async (_caller, allowed) => {
        const request = allowed ? await submitted() : fx.main;
        return {
          path: requestPath(request.id, "/approve"),
          json: { remarks: "Site plan reviewed", reviewedDocuments: [request.documentId] },
        };
      },
    },
    "POST /api/v1/requests/{requestId}/reject": {
      build: async (_caller, allowed) => ({
        path: requestPath(allowed ? (await submitted()).id : fx.main.id, "/reject"),
        json: { remarks: "Not acceptable", reason: "OTHER" },
      }),
    },
    "POST /api/v1/requests/{requestId}/request-changes": {
      build: async (_caller, allowed) => ({
        path: requestPath(allowed ? (await submitted()).id : fx.main.id, "/request-changes"),
        json: { remarks: "Please send a certified plan", requiredDocuments: ["SITE_PLAN"] },
      }),
    },
    "GET /api/v1/requests/{requestId}/approvals": { build: () => ({ path: requestPath(fx.main.id, "/approvals") }) },
    "POST /api/v1/requests/{requestId}/decision-typed-data": {
      build: () => ({
        path: requestPath(fx.main.id, "/decision-typed-data"),
        json: { decision: "APPROVED", remarks: "Site plan reviewed", reviewedDocuments: [fx.main.documentId] },
      }),
    },
    "GET /api/v1/requests/{requestId}/identity-proof": {
      build: () => ({ path: requestPath(fx.main.id, "/identity-proof") }),
    },
    "POST /api/v1/verify/holder/{tokenId}": {
      build: () => ({
        path: `/api/v1/verify/holder/${fx.issued.tokenId}`,
        json: { applicantId: "someone-else", salt: `0x${"11".repeat(32)}` },
      }),
    },
    "POST /api/v1/verify/credential": {
      build: () => ({ path: "/api/v1/verify/credential", json: { credential: fx.issued.credential } }),
    },
    "POST /api/v1/departments/key-proof-typed-data": {
      build: () => ({
        path: "/api/v1/departments/key-proof-typed-data",
        json: { code: "KEY_PROOF_MATRIX", custody: "DEPARTMENT_HELD", walletAddress: `0x${"12".repeat(20)}` },
      }),
    },
    "POST /api/v1/departments/{departmentCode}/wallet-change": {
      build: async (_caller, allowed) => ({
        path: `/api/v1/departments/${allowed ? (await createDepartment(api, adminToken, { code: newCode(), name: "Authorization matrix, wallet change" })).code : department.code}/wallet-change`,
        json: { custody: "CUSTODIAL" },
      }),
    },
    "POST /api/v1/departments/{departmentCode}/wallet-change/cancel": {
      build: async (_caller, allowed) => ({
        path: `/api/v1/departments/${allowed ? await proposedWalletChange() : department.code}/wallet-change/cancel`,
      }),
    },
    // The fixture department refuses a change proposed for its own wallet (its cell is the only one allowed).
    "POST /api/v1/departments/{departmentCode}/wallet-change/refuse": {
      build: async (_caller, allowed) => {
        if (allowed) {
          must(
            await admin.post(`/departments/${department.code}/wallet-change`, { custody: "CUSTODIAL" }),
            200,
            "propose a change of the department's wallet",
          );
          // The API reads the pending change from the index: on a loaded machine it may trail the proposal.
          await eventually("the proposed change in the index", async () =>
            (await admin.get(`/departments/${department.code}`)).body.pendingWalletChange ? true : undefined,
          );
        }
        return { path: `/api/v1/departments/${department.code}/wallet-change/refuse` };
      },
    },
    "POST /api/v1/departments/{departmentCode}/wallet-change/activate": {
      build: async (_caller, allowed) => {
        if (!allowed) return { path: `/api/v1/departments/${department.code}/wallet-change/activate` };
        const code = await proposedWalletChange();
        const pending = (await admin.get(`/departments/${code}`)).body.pendingWalletChange;
        await new Promise((r) => setTimeout(r, Math.max(0, Date.parse(pending.effectiveAt) - Date.now()) + 1500));
        return { path: `/api/v1/departments/${code}/wallet-change/activate` };
      },
    },
    "POST /api/v1/requests/{requestId}/resolve-escalation": {
      build: () => ({
        path: requestPath(fx.escalated.id, "/resolve-escalation"),
        json: { decision: "REJECT", reasonCode: 5, remarks: "Rejection upheld" },
      }),
    },
    "POST /api/v1/requests/{requestId}/suspend": licenceAction("suspend", 1),
    "POST /api/v1/requests/{requestId}/reinstate": licenceAction("reinstate", 2),
    "POST /api/v1/requests/{requestId}/revoke": licenceAction("revoke", 3),

    "POST /api/v1/requests": {
      build: () => ({ path: "/api/v1/requests", json: { applicantId: ownerId, requestType: "BUILDING_PERMIT" } }),
    },
    "GET /api/v1/requests": plain("/api/v1/requests"),
    "POST /api/v1/delegations": {
      build: async (_caller, allowed) => ({
        path: "/api/v1/delegations",
        json: {
          clientId: allowed
            ? (await createClient(api, adminToken, `authz delegate ${run}`, ["applications:read"])).clientId
            : scopeClientIds["applications:read"],
        },
      }),
    },
    "GET /api/v1/delegations": plain("/api/v1/delegations"),
    // The applicant revokes a delegation of its own; anyone else names one of the applicant's delegations.
    "DELETE /api/v1/delegations/{clientId}": {
      build: async (_caller, allowed) => {
        if (!allowed) return { path: `/api/v1/delegations/${scopeClientIds["applications:read"]}` };
        const { clientId } = await createClient(api, adminToken, `authz revoke ${run}`, ["applications:read"]);
        must(await owner.post("/delegations", { clientId }), 201, "delegate");
        return { path: `/api/v1/delegations/${clientId}` };
      },
    },
    "GET /api/v1/requests/{requestId}": { build: () => ({ path: requestPath(fx.main.id) }) },
    "POST /api/v1/requests/{requestId}/submit": {
      build: async (_caller, allowed) => ({
        path: requestPath(allowed ? (await draftWithDocument()).id : fx.probeDraftWithDocument, "/submit"),
      }),
    },
    "POST /api/v1/requests/{requestId}/cancel": {
      build: async (_caller, allowed) => ({
        path: requestPath(allowed ? await draft() : fx.probeDraft, "/cancel"),
        json: { reason: "No longer needed" },
      }),
    },
    "GET /api/v1/requests/{requestId}/timeline": { build: () => ({ path: requestPath(fx.main.id, "/timeline") }) },

    "POST /api/v1/requests/{requestId}/documents": {
      build: async (_caller, allowed) => ({
        path: requestPath(allowed ? await draft() : fx.probeDraft, "/documents"),
        upload: { bytes: uniquePdf(), filename: "site-plan.pdf", fields: { docType: "SITE_PLAN" } },
      }),
    },
    "GET /api/v1/requests/{requestId}/documents": { build: () => ({ path: requestPath(fx.main.id, "/documents") }) },
    "PUT /api/v1/requests/{requestId}/documents/{documentId}": {
      // One draft, a new version per cell: in turn, as concurrent updates of one document are refused (409).
      sequential: true,
      build: () => ({
        path: requestPath(fx.update.id, `/documents/${fx.update.documentId}`),
        upload: { bytes: uniquePdf(), filename: "site-plan-v2.pdf", fields: { description: "new version" } },
      }),
    },
    "GET /api/v1/documents/{documentId}": { build: () => ({ path: `/api/v1/documents/${fx.main.documentId}` }) },
    "GET /api/v1/documents/{documentId}/download": {
      build: () => ({ path: `/api/v1/documents/${fx.main.documentId}/download` }),
    },

    "POST /api/v1/departments": {
      build: () => ({ path: "/api/v1/departments", json: { code: newCode(), name: "Authorization matrix, new" } }),
    },
    "GET /api/v1/departments": plain("/api/v1/departments"),
    "GET /api/v1/departments/{departmentCode}": { build: () => ({ path: `/api/v1/departments/${department.code}` }) },
    "PATCH /api/v1/departments/{departmentCode}": {
      build: () => ({
        path: `/api/v1/departments/${department.code}`,
        json: { name: "Authorization matrix department (renamed)" },
      }),
    },
    // A department of its own: its credentials change for good.
    "POST /api/v1/departments/{departmentCode}/regenerate-api-key": {
      build: () => ({ path: `/api/v1/departments/${regenerated.code}/regenerate-api-key` }),
    },
    "GET /api/v1/departments/{departmentCode}/stats": {
      build: () => ({ path: `/api/v1/departments/${department.code}/stats` }),
    },

    "POST /api/v1/departments/{departmentCode}/reviewer-invitations": {
      build: () => ({
        path: `/api/v1/departments/${department.code}/reviewer-invitations`,
        json: { name: "Matrix invitee" },
      }),
    },
    "GET /api/v1/departments/{departmentCode}/reviewers": {
      build: () => ({ path: `/api/v1/departments/${department.code}/reviewers` }),
    },
    "DELETE /api/v1/departments/{departmentCode}/reviewers/{reviewerId}": {
      build: async (_caller, allowed) => ({
        path: `/api/v1/departments/${department.code}/reviewers/${
          (allowed ? await reviewerInvitation("Matrix removal") : await reviewerFixture()).reviewerId
        }`,
      }),
    },
    "DELETE /api/v1/departments/{departmentCode}/reviewers/{reviewerId}/passkeys/{passkeyId}": {
      build: async (_caller, allowed) => {
        const { reviewerId, passkey } = allowed
          ? await registeredReviewer("Matrix passkey removal")
          : await reviewerFixture();
        return { path: `/api/v1/departments/${department.code}/reviewers/${reviewerId}/passkeys/${passkey.id}` };
      },
    },
    "POST /api/v1/console/invitations/registration-options": {
      build: async () => ({
        path: "/api/v1/console/invitations/registration-options",
        json: { token: (await reviewerInvitation("Matrix options")).token, deviceName: "Matrix" },
      }),
    },
    "POST /api/v1/console/invitations/register": {
      build: async () => {
        const { token, ceremony } = await reviewerInvitation("Matrix registration");
        const options = must(
          await apiClient(api).post("/console/invitations/registration-options", { token, deviceName: "Matrix" }),
          200,
          "registration options",
        ).options;
        return {
          path: "/api/v1/console/invitations/register",
          json: { token, response: registrationResponse(createSoftwarePasskey(), options, ceremony) },
        };
      },
    },
    "POST /api/v1/console/sign-in/options": { build: () => ({ path: "/api/v1/console/sign-in/options", json: {} }) },
    "POST /api/v1/console/sign-in": {
      sequential: true,
      build: async () => {
        const { passkey, ceremony } = await reviewerFixture();
        const options = must(await apiClient(api).post("/console/sign-in/options", {}), 200, "sign-in options").options;
        return {
          path: "/api/v1/console/sign-in",
          json: { response: authenticationResponse(passkey, options, ceremony) },
        };
      },
    },
    // Without a session cookie, signing out ends nothing and answers 204 to anyone.
    "POST /api/v1/console/sign-out": plain("/api/v1/console/sign-out"),
    // Only a console session (a reviewer's cookie, no column here) reads it: a department's API key is 403.
    "GET /api/v1/console/me": plain("/api/v1/console/me"),
    // Passkey custody: the department's key or an administrator moves a department (the fixture department, whose
    // reviewer has a passkey; a fresh one with a reviewer for the administrator). Reviewer changes need a department
    // whose wallet is already its passkey account: the fixture department's is custodial, so allowed callers get 409.
    "POST /api/v1/departments/{departmentCode}/passkey-custody": {
      build: async (caller, allowed) => {
        if (allowed && caller === "department") await reviewerFixture();
        const code = allowed && caller === "admin" ? await departmentWithReviewer() : department.code;
        return { path: `/api/v1/departments/${code}/passkey-custody`, json: { threshold: 1 } };
      },
    },
    "POST /api/v1/departments/{departmentCode}/passkey-account/reviewer-changes": {
      build: () => ({
        path: `/api/v1/departments/${department.code}/passkey-account/reviewer-changes`,
        json: { remove: [`0x${"11".repeat(64)}`] },
      }),
    },
    // Opening and signing a decision is a reviewer's console session's (no column): a department's key is 403.
    "POST /api/v1/console/requests/{requestId}/signing-requests": {
      build: () => ({
        path: `/api/v1/console/requests/${fx.main.id}/signing-requests`,
        json: { decision: "APPROVED", remarks: "authorization matrix" },
      }),
    },
    "GET /api/v1/console/signing-requests": plain("/api/v1/console/signing-requests"),
    // After the passkey-custody row: the fixture department's key proof is its signing request.
    "GET /api/v1/console/signing-requests/{signingRequestId}": {
      order: 1,
      build: async () => ({ path: `/api/v1/console/signing-requests/${(await departmentSigningRequest()).id}` }),
    },
    "POST /api/v1/console/signing-requests/{signingRequestId}/assertions": {
      order: 1,
      build: async () => {
        const signing = await departmentSigningRequest();
        const { ceremony } = await reviewerFixture();
        return {
          path: `/api/v1/console/signing-requests/${signing.id}/assertions`,
          json: {
            response: authenticationResponse(createSoftwarePasskey(), { challenge: signing.challenge }, ceremony),
          },
        };
      },
    },
    // Each department reads its own queue and history (another department's key: its own, empty).
    "GET /api/v1/console/queue": plain("/api/v1/console/queue"),
    "GET /api/v1/console/decisions": plain("/api/v1/console/decisions"),

    "GET /api/v1/workflows": plain("/api/v1/workflows"),
    "POST /api/v1/workflows/validate": {
      build: () => ({ path: "/api/v1/workflows/validate", json: workflowDefinition }),
    },
    "GET /api/v1/workflows/{workflowId}": { build: () => ({ path: `/api/v1/workflows/${workflowId}` }) },
    "POST /api/v1/workflows/{workflowId}/validate": {
      build: () => ({ path: `/api/v1/workflows/${workflowId}/validate` }),
    },
    // After every other row (requests need the active version): a new version, its deactivation, a registration again.
    "PUT /api/v1/workflows/{workflowId}": {
      order: 1,
      build: async () => ({
        path: `/api/v1/workflows/${(await workflowVersions(api, adminToken, "BUILDING_PERMIT")).at(-1)!.workflowId}`,
        json: workflowDefinition,
      }),
    },
    "DELETE /api/v1/workflows/{workflowId}": {
      order: 2,
      build: async (_caller, allowed) => {
        const active = (await workflowVersions(api, adminToken, "BUILDING_PERMIT")).find((w) => w.isActive);
        return { path: `/api/v1/workflows/${allowed ? active!.workflowId : workflowId}` };
      },
    },
    "POST /api/v1/workflows": { order: 3, build: () => ({ path: "/api/v1/workflows", json: workflowDefinition }) },

    "POST /api/v1/webhooks": {
      build: () => ({
        path: "/api/v1/webhooks",
        json: {
          departmentCode: department.code,
          url: `${receiver.url}/${randomUUID()}`,
          events: ["certificate.revoked"],
          secret: `authorization-matrix-secret-${run}`,
        },
      }),
    },
    "GET /api/v1/webhooks": plain("/api/v1/webhooks"),
    "GET /api/v1/webhooks/logs": plain("/api/v1/webhooks/logs"),
    "DELETE /api/v1/webhooks/{webhookId}": {
      build: async (_caller, allowed) => ({
        path: `/api/v1/webhooks/${allowed ? await departmentWebhook() : fx.webhookId}`,
      }),
    },
    "POST /api/v1/webhooks/{webhookId}/enable": { build: () => ({ path: `/api/v1/webhooks/${fx.webhookId}/enable` }) },
    "POST /api/v1/webhooks/{webhookId}/test": { build: () => ({ path: `/api/v1/webhooks/${fx.webhookId}/test` }) },

    "GET /api/v1/admin/stats": plain("/api/v1/admin/stats"),
    "GET /api/v1/admin/audit-logs": plain("/api/v1/admin/audit-logs"),
    "GET /api/v1/admin/blockchain/status": plain("/api/v1/admin/blockchain/status"),
    "GET /api/v1/admin/blockchain/transactions": plain("/api/v1/admin/blockchain/transactions"),

    "GET /api/v1/verify/issuer": plain("/api/v1/verify/issuer"),
    "GET /api/v1/verify/qr/{qrCode}": {
      build: () => ({ path: `/api/v1/verify/qr/${encodeURIComponent(fx.issued.qrPayload)}` }),
    },
    "GET /api/v1/verify/document/{hash}": { build: () => ({ path: `/api/v1/verify/document/${fx.main.hash}` }) },
    "GET /api/v1/verify/{tokenId}": { build: () => ({ path: `/api/v1/verify/${fx.issued.tokenId}` }) },
    "GET /api/v1/requests/{requestId}/qr": { build: () => ({ path: requestPath(fx.issued.id, "/qr?format=json") }) },
    "GET /api/v1/files/{token}": { build: () => ({ path: fx.fileUrl }) },
    "GET /.well-known/did.json": plain("/.well-known/did.json"),
    "GET /credentials/status/{list}/{kind}": plain("/credentials/status/0/token-status"),
    "GET /credentials/types/licence": plain("/credentials/types/licence"),
    "GET /api/v1/requests/{requestId}/credential": {
      build: () => ({ path: requestPath(fx.issued.id, "/credential?format=vc%2Bjwt") }),
    },
    "POST /api/v1/requests/{requestId}/credential-offer": {
      build: () => ({ path: requestPath(fx.issued.id, "/credential-offer") }),
    },
    "POST /api/v1/verify/holder/{tokenId}/credential-offer": {
      build: async () => {
        const response = await fetch(`${api}${requestPath(fx.issued.id, "/identity-proof")}`, {
          headers: { authorization: `Bearer ${tokens.applicant}` },
        });
        const { applicantId, salt } = await response.json();
        return { path: `/api/v1/verify/holder/${fx.issued.tokenId}/credential-offer`, json: { applicantId, salt } };
      },
    },
    "GET /.well-known/openid-credential-issuer": plain("/.well-known/openid-credential-issuer"),
    "GET /.well-known/oauth-authorization-server": plain("/.well-known/oauth-authorization-server"),
    "GET /oid4vci/credential-offer/{code}": {
      build: async () => ({ path: `/oid4vci/credential-offer/${await offeredCode()}` }),
    },
    "POST /oid4vci/token": {
      build: async () => ({
        path: "/oid4vci/token",
        form: {
          grant_type: "urn:ietf:params:oauth:grant-type:pre-authorized_code",
          "pre-authorized_code": await offeredCode(),
        },
      }),
    },
    "POST /oid4vci/nonce": plain("/oid4vci/nonce"),
    "POST /oid4vci/credential": {
      build: () => ({ path: "/oid4vci/credential", json: { credential_configuration_id: "licence_dc_sd_jwt" } }),
    },
  };

  function credentials(caller: Caller): Record<string, string> {
    if (caller === "anonymous") return {};
    if (caller === "department" || caller === "other department") {
      const d = caller === "department" ? department : otherDepartment;
      return { "x-api-key": d.apiKey, "x-department-code": d.code };
    }
    return { authorization: `Bearer ${tokens[caller]}` };
  }

  async function send(caller: Caller, call: Call): Promise<Outcome> {
    const headers: Record<string, string> = credentials(caller);
    let body: BodyInit | undefined;
    if (call.json !== undefined) {
      headers["content-type"] = "application/json";
      body = JSON.stringify(call.json);
    } else if (call.form) {
      body = new URLSearchParams(call.form);
    } else if (call.upload) {
      const form = new FormData();
      for (const [name, value] of Object.entries(call.upload.fields)) form.set(name, value);
      form.set(
        "file",
        new Blob([new Uint8Array(call.upload.bytes)], { type: "application/pdf" }),
        call.upload.filename,
      );
      body = form;
    }
    const response = await fetch(`${api}${call.path}`, { method: call.method, headers, body, redirect: "manual" });
    const text = await response.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: response.status, body: text.slice(0, 300), headers: response.headers, json };
  }

  async function runCell(row: MatrixRow, caller: Caller): Promise<void> {
    const expected = row.expected[caller];
    const [method] = row.endpoint.split(" ");
    try {
      const call = await drivers[row.endpoint].build(caller, expected >= 200 && expected < 300);
      outcomes.set(cellKey(row.endpoint, caller), await send(caller, { ...call, method }));
    } catch (error) {
      outcomes.set(cellKey(row.endpoint, caller), { error: (error as Error).message });
    }
  }

  async function pool(tasks: (() => Promise<void>)[], width: number): Promise<void> {
    let next = 0;
    await Promise.all(
      Array.from({ length: Math.min(width, tasks.length) }, async () => {
        while (next < tasks.length) await tasks[next++]();
      }),
    );
  }

  before(async function () {
    const stack = current();
    receiver = await startReceiver();
    ({ api, adminToken, admin } = await adminSession(stack));
    tokens.admin = adminToken;

    // Callers: two applicants, two departments (and one whose key is regenerated), one system client per scope.
    const [ownerToken, otherToken, departments, clients] = await Promise.all([
      applicantToken(api, { id: ownerId, name: "Olga Owner" }),
      applicantToken(api, { id: `authz-other-${run}`, name: "Oscar Other" }),
      Promise.all(
        [`AZ_D_${tag}`, `AZ_O_${tag}`, `AZ_R_${tag}`].map((code) =>
          createDepartment(api, adminToken, { code, name: `Authorization matrix ${code}` }),
        ),
      ),
      Promise.all(SCOPE_CALLERS.map((scope) => createClient(api, adminToken, `authz ${scope} ${run}`, [scope]))),
    ]);
    tokens.applicant = ownerToken;
    tokens["other applicant"] = otherToken;
    [department, otherDepartment, regenerated] = departments;
    for (const [i, scope] of SCOPE_CALLERS.entries()) {
      tokens[scope] = await clientToken(api, clients[i].clientId, clients[i].clientSecret);
      scopeClientIds[scope] = clients[i].clientId;
    }
    verificationClient = clients[SCOPE_CALLERS.indexOf("verification:read")];
    probeClientId = (await createClient(api, adminToken, `authz probe ${run}`, ["verification:read"])).clientId;
    owner = apiClient(api, ownerToken);
    // A system client acts only for applicants who delegated to it: the fixture's applicant delegates to each one
    // that acts for applicants (a verification:read client cannot be delegated to).
    for (const scope of SCOPE_CALLERS.filter((s) => s !== "verification:read"))
      must(await owner.post("/delegations", { clientId: scopeClientIds[scope] }), 201, `delegate to ${scope}`);
    asDepartment = departmentClient(api, department);

    // The workflow: one stage where the department reviews the site plan; a rejection escalates.
    workflowDefinition = workflow(
      "BUILDING_PERMIT",
      `Building permit (authorization matrix ${run})`,
      stage("review", "Review", "PARALLEL", { [department.code]: ["SITE_PLAN"] }, { onRejection: "ESCALATE" }),
    );
    workflowId = (await registerWorkflowVersion(api, adminToken, workflowDefinition)).workflowId;

    // Shared fixtures, built together.
    const [main, issued, escalated, probeDraft, probeDraftWithDocument, update, webhookId] = await Promise.all([
      submitted(),
      submitted().then(async (request) => {
        must(
          await asDepartment.post(`/requests/${request.id}/approve`, {
            remarks: "Approved",
            reviewedDocuments: [request.documentId],
          }),
          200,
          "approve",
        );
        return request;
      }),
      submitted().then(async (request) => {
        must(
          await asDepartment.post(`/requests/${request.id}/reject`, { remarks: "Escalate this", reason: "OTHER" }),
          200,
          "reject",
        );
        return request;
      }),
      draft(),
      draftWithDocument(),
      draftWithDocument(),
      departmentWebhook(),
    ]);
    const document = must(await admin.get(`/documents/${main.documentId}`), 200, "document");
    const qr = must(await admin.get(`/requests/${issued.id}/qr?format=json`), 200, "qr");
    const downloadUrl = new URL(document.downloadUrl);
    fx.main = { ...main, hash: document.currentHash };
    const credential = await fetch(`${api}/api/v1/requests/${issued.id}/credential?format=vc%2Bjwt`, {
      headers: { authorization: `Bearer ${tokens.applicant}` },
    });
    expect(credential.status, "credential").to.equal(200);
    fx.issued = { id: issued.id, tokenId: qr.tokenId, qrPayload: qr.payload, credential: await credential.text() };
    fx.escalated = escalated;
    fx.probeDraft = probeDraft;
    fx.probeDraftWithDocument = probeDraftWithDocument.id;
    fx.update = update;
    fx.webhookId = webhookId;
    fx.fileUrl = `${downloadUrl.pathname}${downloadUrl.search}`;

    // Every cell, by order; within an order, concurrently (sequential rows as one task each).
    const rows = matrix.rows.filter((row) => drivers[row.endpoint]);
    const orders = [...new Set(rows.map((row) => drivers[row.endpoint].order ?? 0))].sort((a, b) => a - b);
    for (const order of orders) {
      const tasks: (() => Promise<void>)[] = [];
      for (const row of rows.filter((r) => (drivers[r.endpoint].order ?? 0) === order)) {
        if (drivers[row.endpoint].sequential)
          tasks.push(async () => {
            for (const caller of CALLERS) await runCell(row, caller);
          });
        else for (const caller of CALLERS) tasks.push(() => runCell(row, caller));
      }
      await pool(tasks, CONCURRENCY);
    }
  });

  after(async () => {
    // The department's webhooks (its own and those the administrator registered for it) stop with this test.
    if (asDepartment) {
      const listed = await asDepartment.get("/webhooks");
      for (const hook of (listed.body?.webhooks ?? []) as Json[])
        await asDepartment.delete(`/webhooks/${hook.webhookId}`);
    }
    await receiver?.stop();
  });

  it("the table is well formed: the callers as columns, a status in every cell, one row per endpoint", function () {
    expect(matrix.problems).to.deep.equal([]);
    const endpoints = matrix.rows.map((row) => row.endpoint);
    expect(
      endpoints.filter((e, i) => endpoints.indexOf(e) !== i),
      "rows listed twice",
    ).to.deep.equal([]);
  });

  it("has exactly one row per route of the live route table (the OpenAPI document), and a request for each", async function () {
    const response = await fetch(`${api}/api/v1/openapi.json`);
    expect(response.status).to.equal(200);
    const document = (await response.json()) as { paths: Record<string, Record<string, unknown>> };
    const routes = Object.entries(document.paths).flatMap(([path, operations]) =>
      Object.keys(operations)
        .filter((method) => HTTP_METHODS.includes(method))
        .map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(routes.length).to.be.greaterThan(50);
    const rows = matrix.rows.map((row) => row.endpoint);
    expect(
      routes.filter((route) => !rows.includes(route)),
      "routes without a row in docs/authorization-matrix.md",
    ).to.deep.equal([]);
    expect(
      rows.filter((row) => !routes.includes(row)),
      "rows naming no route of the OpenAPI document",
    ).to.deep.equal([]);
    expect(
      rows.filter((row) => !drivers[row]),
      "rows this test has no request for",
    ).to.deep.equal([]);
    expect(
      Object.keys(drivers).filter((key) => !rows.includes(key)),
      "requests for rows the table does not have",
    ).to.deep.equal([]);
  });

  it("every status a cell answered is documented for its operation, with the documented headers and body shape", async function () {
    const { operations } = await loadOperations(api);
    const undocumented: string[] = [];
    for (const row of matrix.rows) {
      const op = operations.find((o) => `${o.method} ${o.path}` === row.endpoint);
      if (!op) continue; // the test above names rows without an operation
      for (const caller of CALLERS) {
        const outcome = outcomes.get(cellKey(row.endpoint, caller));
        if (outcome?.status === undefined) continue;
        const problem = undocumentedAnswer(op, outcome.status, outcome.headers!, outcome.json);
        if (problem) undocumented.push(`${caller}: ${problem}`);
      }
    }
    expect(undocumented).to.deep.equal([]);
  });

  for (const row of matrix.rows) {
    it(row.endpoint, function () {
      if (!drivers[row.endpoint])
        throw new Error(`no request is defined for ${row.endpoint}: add one to the drivers of this test`);
      const wrong = CALLERS.flatMap((caller) => {
        const outcome = outcomes.get(cellKey(row.endpoint, caller));
        if (!outcome) return [`${caller}: not run`];
        if (outcome.error) return [`${caller}: expected ${row.expected[caller]}, the cell failed: ${outcome.error}`];
        if (outcome.status !== row.expected[caller])
          return [`${caller}: expected ${row.expected[caller]}, got ${outcome.status} ${outcome.body}`];
        return [];
      });
      expect(wrong, `cells of ${row.endpoint} that differ from docs/authorization-matrix.md`).to.deep.equal([]);
    });
  }
});
