/** Department routes: registration and administration (admin), reads (any authenticated reader), statistics. */
import { z } from "zod/v4";
import { isAdmin } from "../auth/principal.ts";
import type { DomainContext } from "../domain/context.ts";
import { departmentStats, STATS_DEFINITIONS } from "../reads/departmentStats.ts";
import {
  CreateDepartmentInput,
  Department,
  DepartmentList,
  DepartmentResponse,
  DepartmentStatsResponse,
  KeyProofTypedData,
  KeyProofTypedDataInput,
  RegeneratedKey,
  StatsQuery,
  UpdateDepartmentInput,
  WalletChangeInput,
} from "../domain/departments/departmentSchemas.ts";
import { DepartmentStore } from "../stores/departmentStore.ts";
import { isAwaitingGovernance } from "../domain/governance.ts";
import { AwaitingGovernanceResponse } from "./schemas/common.ts";
import {
  createDepartment,
  departmentAsSeenBy,
  keyProofToSign,
  proposeWalletChange,
  regenerateApiKey,
  settleWalletChange,
  updateDepartment,
} from "../domain/departments/manageDepartments.ts";
import { forbidden, notFound } from "../domain/errors.ts";
import type { MinedWrite } from "../http/idempotency.ts";
import { routeGroup, type RouteDefinition } from "../http/routeTable.ts";

const route = routeGroup({
  tags: ["Departments"],
  access: [{ kind: "admin" }],
  responses: { 401: "Not authenticated" },
});

/** A department after a change recorded on chain, with the change's transaction. */
const DepartmentWithTransaction = Department.extend({ transactionHash: z.string() });
const CodeParams = z.object({ departmentCode: z.string().min(1).max(64) });

const READERS = [
  { kind: "applicant" as const },
  { kind: "client" as const, scope: "applications:read" as const },
  { kind: "apiKey" as const },
  { kind: "admin" as const },
];

/** How departments authenticate and sign; shown on POST /departments (the OpenAPI-visible home of the rules). */
export const DEPARTMENT_AUTH_DESCRIPTION = [
  "**Authenticating as a department.** Send `X-API-Key: <apiKey>` and `X-Department-Code: <code>`. A wrong key, an unknown code or a department deactivated on chain is 401 UNAUTHORIZED; deactivation and key regeneration take effect at once.",
  "",
  "**Signed requests** (required for a department registered or updated with `requireSignedRequests: true`, and for every department when the server runs with `REQUIRE_SIGNED_REQUESTS=true`; verified whenever sent). Add `X-Timestamp: <unix seconds>`, optionally `X-Nonce: <1-64 of A-Z a-z 0-9 . _ ~ ->` (random per request) and `X-Signature: <hex HMAC-SHA256>`, keyed with the apiSecret string (UTF-8), over five lines joined by `\\n` (no trailing newline):",
  "",
  "    METHOD            (upper case, e.g. POST)",
  "    request target    (path and query exactly as sent, e.g. /api/v1/departments/FIRE/stats?startDate=2025-01-01)",
  "    X-Timestamp value",
  "    X-Nonce value     (empty line when no nonce is sent)",
  "    body hash         (lower-case hex SHA-256 of the body; of the empty string when there is no body)",
  "",
  "The body hash of a JSON body is over its canonical JSON: object keys sorted (JavaScript's default order, UTF-16 code units) at every level, no whitespace, values as JSON.stringify writes them; send the canonical JSON as the body and it is simply the SHA-256 of the bytes sent. Departments' signed requests carry JSON or no body (no forms or uploads). A signature is accepted within 5 minutes of the server's clock and only once (a replay is 401): sign every retry again, and send a nonce so that two identical requests within the same second differ.",
].join("\n");

export function departmentRoutes(context: DomainContext): RouteDefinition[] {
  const store = new DepartmentStore(context.pool);
  const visible = async (code: string) => {
    const department = await store.byCode(code);
    if (!department) throw notFound("Department");
    return department;
  };
  /** A wallet change's answer: the department as the index has it once the change is mined, and the transaction. */
  const walletChangeBody = (change: { department: Parameters<typeof store.toJson>[0]; transactionHash: string }) => ({
    ...store.toJson(change.department),
    transactionHash: change.transactionHash,
  });
  /** The same answer for a retry whose process died after recording the change. */
  const recoveredWalletChange = async (code: string, write: MinedWrite) => ({
    body: walletChangeBody({ department: await visible(code), transactionHash: write.tx.hash }),
  });

  return [
    route.post("/departments", "createDepartment", {
      sendsTransactions: true,
      summary: "Register a department (custodial wallet, code ↔ wallet on chain, API credentials shown once)",
      description: [
        "Creates the department's funded custodial wallet (with a remote signer, `SIGNER=remote`: takes `walletAddress`, or the signer's first key not yet in use), registers code ↔ wallet in the ApprovalRegistry and answers once the registration is confirmed. apiKey and apiSecret are returned only in this response (never stored in the clear; Idempotency-Key is ignored so they are never replayed). `requireSignedRequests` is our extension.",
        "",
        DEPARTMENT_AUTH_DESCRIPTION,
      ].join("\n"),
      body: CreateDepartmentInput,
      idempotent: false,
      responses: {
        201: { description: "Registered", schema: DepartmentResponse },
        202: {
          description:
            "AWAITING_GOVERNANCE: this API holds no governance key (a Safe governs): nothing was sent or recorded; `transaction` is the registration for governance to execute",
          schema: AwaitingGovernanceResponse,
        },
        400: "Invalid body (code must match ^[A-Z_]+$, at most 31 characters; walletAddress given without a remote signer, or not one of its keys; keyProof missing for DEPARTMENT_HELD); INVALID_KEY_PROOF: keyProof is not the wallet's signature of its DepartmentKey typed data; INVALID_WEBHOOK_URL: webhookUrl is not an allowed target",
        403: "Not an administrator",
        409: "CONFLICT: the code is already registered; WALLET_IN_USE: walletAddress is already a wallet here; NO_SIGNER_KEY_AVAILABLE: every key of the remote signer is in use",
        502: "SIGNER_REFUSED or SIGNER_INVALID_RESPONSE: the remote signer refused or answered another transaction; nothing recorded",
        503: "Chain or remote signer (SIGNER_UNAVAILABLE) unavailable, nothing recorded",
      },
      handler: async ({ body, meta }) => {
        const created = await createDepartment(context, meta, body);
        return { status: isAwaitingGovernance(created) ? 202 : 201, body: created };
      },
    }),
    route.post("/departments/key-proof-typed-data", "getDepartmentKeyTypedData", {
      idempotent: false,
      summary: "The EIP-712 typed data a department's own wallet signs to prove it holds its key",
      description:
        "For a department that holds its own key (DEPARTMENT_HELD), before POST /departments or POST /departments/{departmentCode}/wallet-change: the DepartmentKey(code, wallet, custody) typed data in the approval registry's EIP-712 domain (from its eip712Domain(), with the deployment's salt). Sign it with the wallet (eth_signTypedData_v4; a Safe signs it as EIP-1271) and send the signature as `keyProof`. Reads only: nothing is recorded.",
      body: KeyProofTypedDataInput,
      responses: {
        200: { description: "The typed data to sign", schema: KeyProofTypedData },
        400: "Invalid body",
        403: "Not an administrator",
      },
      handler: async ({ body }) => ({ body: await keyProofToSign(context, body) }),
    }),
    route.get("/departments", "listDepartments", {
      summary: "Departments (active and inactive)",
      description:
        "Departments whose registration is confirmed on chain, by code. isActive and walletAddress are the chain's. webhookUrl and requireSignedRequests are shown only to administrators and to the department itself.",
      access: READERS,
      responses: { 200: { description: "Departments", schema: DepartmentList }, 403: "Not allowed" },
      handler: async ({ principal }) => ({
        body: {
          departments: (await store.list()).map((d) => departmentAsSeenBy(principal, store.toJson(d))),
        },
      }),
    }),
    route.get("/departments/:departmentCode", "getDepartment", {
      summary: "A department",
      access: READERS,
      params: CodeParams,
      responses: {
        200: { description: "The department", schema: Department },
        403: "Not allowed",
        404: "No such department",
      },
      handler: async ({ params, principal }) => ({
        body: departmentAsSeenBy(principal, store.toJson(await visible(params.departmentCode))),
      }),
    }),
    route.patch("/departments/:departmentCode", "updateDepartment", {
      sendsTransactions: true,
      summary: "Update a department (name, webhookUrl, isActive on chain, requireSignedRequests)",
      description:
        "Off-chain fields change at once; a change of isActive is recorded on chain (setDepartmentActive) in the same database transaction and answers once the index has it: from then on a deactivated department's API key is refused (401) by every API process, and its wallet can no longer record decisions on chain. `requireSignedRequests` is our extension. Each change is audited (UPDATE, ACTIVATE, DEACTIVATE).",
      params: CodeParams,
      body: UpdateDepartmentInput,
      responses: {
        200: { description: "The department as updated", schema: Department },
        400: "Invalid body; INVALID_WEBHOOK_URL: webhookUrl is not an allowed target",
        403: "Not an administrator",
        404: "No such department",
        503: "Chain unavailable, nothing recorded",
      },
      handler: async ({ params, body, meta }) => {
        const { department } = await updateDepartment(context, meta, params.departmentCode, body);
        return { body: store.toJson(department) };
      },
    }),
    route.post("/departments/:departmentCode/regenerate-api-key", "regenerateDepartmentApiKey", {
      summary: "New API key and secret (shown once); the old ones stop working at once",
      description:
        "Both the API key and the API secret are replaced. Idempotency-Key is ignored (the credentials are never stored or replayed). Audited as REGENERATE_KEY (without the credentials).",
      params: CodeParams,
      idempotent: false,
      responses: {
        200: { description: "The new credentials", schema: RegeneratedKey },
        403: "Not an administrator",
        404: "No such department",
      },
      handler: async ({ params, meta }) => ({ body: await regenerateApiKey(context, meta, params.departmentCode) }),
    }),
    route.post("/departments/:departmentCode/wallet-change", "proposeDepartmentWalletChange", {
      sendsTransactions: true,
      summary: "Propose a new wallet or custody for a department (public on chain, effective only after a delay)",
      description:
        "Recorded on chain (proposeDepartmentWallet, sent by governance with the new wallet's keyProof: the platform signs it for a CUSTODIAL wallet, a DEPARTMENT_HELD wallet gives its own, see POST /departments/key-proof-typed-data) and audited. The change waits out the registry's wallet delay (fixed at deployment: at least 24 h on a real network) in public: the department's current wallet or an administrator can cancel it, and it takes effect only when activated after `effectiveAt`. Until then the current wallet decides. CUSTODIAL creates a new platform-held wallet; DEPARTMENT_HELD takes the department's own address.",
      params: CodeParams,
      body: WalletChangeInput,
      responses: {
        200: {
          description: "Proposed: the department with its pendingWalletChange",
          schema: DepartmentWithTransaction,
        },
        202: {
          description:
            "AWAITING_GOVERNANCE: this API holds no governance key (a Safe governs): nothing was sent or recorded; `transaction` is the proposal for governance to execute",
          schema: AwaitingGovernanceResponse,
        },
        400: "Invalid body (keyProof missing for DEPARTMENT_HELD); INVALID_KEY_PROOF: keyProof is not the new wallet's signature of its DepartmentKey typed data",
        403: "Not an administrator",
        404: "No such department",
        409: "WALLET_NOT_ALLOWED: another department's wallet, or a role holder",
        503: "Chain unavailable, nothing recorded",
      },
      handler: async ({ params, body, meta }) => {
        const proposed = await proposeWalletChange(context, meta, params.departmentCode, body);
        if (isAwaitingGovernance(proposed)) return { status: 202, body: proposed };
        return { body: walletChangeBody(proposed) };
      },
      recoverIdempotent: ({ params }, write) => recoveredWalletChange(params.departmentCode, write),
    }),
    ...(["cancel", "activate"] as const).map((verb) =>
      route.post(`/departments/:departmentCode/wallet-change/${verb}`, `${verb}DepartmentWalletChange`, {
        sendsTransactions: true,
        summary:
          verb === "cancel"
            ? "Cancel a department's pending wallet change"
            : "Activate a department's wallet change once its delay has passed",
        description:
          verb === "cancel"
            ? "Recorded on chain (cancelDepartmentWallet, from the administration wallet) and audited. The department itself can refuse it too: POST /departments/{departmentCode}/wallet-change/refuse."
            : "Recorded on chain (activateDepartmentWallet, which anyone may send once the delay has passed) and audited; from then on only the new wallet decides for the department.",
        params: CodeParams,
        responses: {
          200: { description: "Done: the department as it is now", schema: DepartmentWithTransaction },
          403: "Not an administrator",
          404: "No such department",
          409: "NO_WALLET_CHANGE, or WALLET_CHANGE_NOT_DUE (activate before effectiveAt)",
          503: "Chain unavailable, nothing recorded",
        },
        handler: async ({ params, meta }) => {
          const action = verb === "cancel" ? "CANCEL" : "ACTIVATE";
          return { body: walletChangeBody(await settleWalletChange(context, meta, params.departmentCode, action)) };
        },
        recoverIdempotent: ({ params }, write) => recoveredWalletChange(params.departmentCode, write),
      }),
    ),
    route.post("/departments/:departmentCode/wallet-change/refuse", "refuseDepartmentWalletChange", {
      sendsTransactions: true,
      summary: "Your department refuses a pending change of its own wallet",
      description:
        "For the department itself (API key; its own code only): withdraws a wallet change an administrator proposed, by cancelDepartmentWallet sent from the department's current wallet, which the contract accepts from that wallet. Audited as CANCEL_WALLET by the department. A CUSTODIAL department's wallet is held by the platform, which sends the transaction. A DEPARTMENT_HELD department's key is not: the answer is 409 OWN_TRANSACTION_REQUIRED and nothing is sent; `details.transaction` (from, to, data, chainId) is the call to send from the department's wallet (from a Safe: as a Safe transaction to `to` with `data`).",
      access: [{ kind: "apiKey" }],
      params: CodeParams,
      responses: {
        200: {
          description: "Refused on chain: the department, its pendingWalletChange cleared",
          schema: DepartmentWithTransaction,
        },
        403: "Another department's wallet",
        409: "NO_WALLET_CHANGE; OWN_TRANSACTION_REQUIRED: the department holds its own key (details.transaction is the call to send from its wallet)",
        503: "Chain unavailable, nothing recorded",
      },
      handler: async ({ params, principal, meta }) => {
        if (!(principal?.kind === "department" && principal.code === params.departmentCode))
          throw forbidden("A department refuses changes of its own wallet only");
        return { body: walletChangeBody(await settleWalletChange(context, meta, params.departmentCode, "REFUSE")) };
      },
      recoverIdempotent: ({ params }, write) => recoveredWalletChange(params.departmentCode, write),
    }),
    route.get("/departments/:departmentCode/stats", "getDepartmentStats", {
      summary: "A department's review statistics",
      description: `A department (API key) reads its own statistics only (another code is 403); an administrator reads any.\n\n${STATS_DEFINITIONS}`,
      access: [{ kind: "apiKey" }, { kind: "admin" }],
      params: CodeParams,
      query: StatsQuery,
      responses: {
        200: { description: "Statistics", schema: DepartmentStatsResponse },
        400: "Invalid dates",
        403: "Another department's statistics",
        404: "No such department",
      },
      handler: async ({ params, query, principal }) => {
        if (!isAdmin(principal) && !(principal?.kind === "department" && principal.code === params.departmentCode)) {
          throw forbidden("A department reads only its own statistics");
        }
        return { body: await departmentStats(context.pool, await visible(params.departmentCode), query) };
      },
    }),
  ];
}
