/** Departments: the spec's Department / CreateDepartmentInput / DepartmentResponse, our PATCH body and the stats. */
import { z } from "zod/v4";
import { DateTime } from "../../routes/schemas/common.ts";
import { CUSTODY_KINDS } from "../../routes/schemas/contractNames.ts";

/** bytes32 on chain: at most 31 characters (the encoding keeps a terminating zero byte). */
export const DepartmentCode = z
  .string()
  .regex(/^[A-Z_]+$/, "must match ^[A-Z_]+$")
  .max(31, "at most 31 characters (stored as bytes32 on chain)")
  .meta({ description: "Upper-case letters and underscores, 1-31 characters", example: "FIRE_DEPARTMENT" });

/** IApprovalRegistry.Custody: who holds the department wallet's key. */
export const Custody = z.enum(CUSTODY_KINDS).meta({
  id: "Custody",
  description:
    "CUSTODIAL: the platform holds the department's key and signs as the department asks through the API. DEPARTMENT_HELD: the department holds its own key (any wallet, or an EIP-1271 contract wallet such as a Safe) and signs each decision's EIP-712 typed data; no key of it reaches the platform.",
});

const WalletAddress = z.string().regex(/^0x[0-9a-fA-F]{40}$/, "an Ethereum address");

/** A department wallet's proof that it holds its key: its signature of the DepartmentKey typed data. */
export const KeyProof = z
  .string()
  .regex(/^0x(?:[0-9a-fA-F]{2})+$/, "whole bytes of hex after 0x")
  .max(4096)
  .meta({
    description:
      "DEPARTMENT_HELD: the wallet's EIP-712 signature of the DepartmentKey typed data from POST /departments/key-proof-typed-data (65-byte ECDSA for an EOA; for a Safe, the signature bytes its isValidSignature accepts, EIP-1271). Governance registers a wallet only with it, so no address whose key nobody holds can become a department's. CUSTODIAL: omitted, the platform signs with the wallet it holds",
  });

const keyProofGivenExactlyWhenHeld = (body: { custody?: string; keyProof?: string }) =>
  (body.custody === "DEPARTMENT_HELD") === (body.keyProof !== undefined);

const WebhookUrl = z
  .url({ protocol: /^https?$/ })
  .max(2048)
  .meta({
    description:
      "http or https URL; checked like a webhook's (in production only a public unicast address, else 400 INVALID_WEBHOOK_URL)",
  });

export const CreateDepartmentInput = z
  .object({
    code: DepartmentCode,
    name: z.string().trim().min(1).max(200),
    webhookUrl: WebhookUrl.optional(),
    requireSignedRequests: z.boolean().optional().meta({
      description:
        "Extension: when true, every call with this department's API key must be signed (X-Timestamp, X-Signature). Default false.",
    }),
    custody: Custody.optional().meta({ description: "Extension: who holds the department's key (default CUSTODIAL)" }),
    walletAddress: WalletAddress.optional().meta({
      description:
        "Extension. DEPARTMENT_HELD (required then): the department's own address (an EOA or a contract wallet such as a Safe). CUSTODIAL, only when the API signs with a remote signer (SIGNER=remote): the key of the signer (eth_accounts) that becomes the department's wallet (default: the signer's first key not yet in use); refused (400) with the embedded key vault, which creates the key itself.",
    }),
    keyProof: KeyProof.optional(),
  })
  .refine((body) => body.custody !== "DEPARTMENT_HELD" || body.walletAddress !== undefined, {
    message: "walletAddress is required when custody is DEPARTMENT_HELD",
    path: ["walletAddress"],
  })
  .refine(keyProofGivenExactlyWhenHeld, {
    message: "keyProof is given exactly when custody is DEPARTMENT_HELD",
    path: ["keyProof"],
  })
  .meta({ id: "CreateDepartmentInput" });

export const WalletChangeInput = z
  .object({
    custody: Custody,
    walletAddress: WalletAddress.optional().meta({
      description:
        "DEPARTMENT_HELD: the department's own address (required). CUSTODIAL: omitted, a new custodial wallet is created",
    }),
    keyProof: KeyProof.optional(),
  })
  .refine((body) => (body.custody === "DEPARTMENT_HELD") === (body.walletAddress !== undefined), {
    message: "walletAddress is given exactly when custody is DEPARTMENT_HELD",
    path: ["walletAddress"],
  })
  .refine(keyProofGivenExactlyWhenHeld, {
    message: "keyProof is given exactly when custody is DEPARTMENT_HELD",
    path: ["keyProof"],
  })
  .meta({ id: "WalletChangeInput" });

const PendingWalletChange = z
  .object({
    walletAddress: z.string(),
    custody: Custody,
    effectiveAt: DateTime.meta({
      description:
        "From then on anyone can activate it; until then the department's current wallet (or an administrator) can cancel it",
    }),
  })
  .meta({ id: "PendingWalletChange" });

export const UpdateDepartmentInput = z
  .object({
    name: z.string().trim().min(1).max(200).optional(),
    webhookUrl: WebhookUrl.nullable().optional().meta({ description: "null removes it" }),
    isActive: z.boolean().optional().meta({
      description: "Recorded on chain (setDepartmentActive); a deactivated department's API key stops working at once",
    }),
    requireSignedRequests: z
      .boolean()
      .optional()
      .meta({ description: "Extension: require signed requests from this department" }),
  })
  .refine((body) => Object.keys(body).length > 0, {
    message: "give at least one of name, webhookUrl, isActive, requireSignedRequests",
  })
  // The refinement, as JSON Schema states it (zod cannot translate a refinement).
  .meta({ id: "UpdateDepartmentInput", minProperties: 1 });

export const Department = z
  .object({
    code: z.string(),
    name: z.string(),
    walletAddress: z.string().meta({
      description:
        "The department's wallet, registered on chain with its code: its transactions or EIP-712 signatures are the department's decisions",
    }),
    custody: Custody,
    pendingWalletChange: PendingWalletChange.nullable().meta({
      description: "A wallet or custody change proposed on chain, waiting out its public delay",
    }),
    webhookUrl: z.string().nullable().optional().meta({
      description: "Shown only to administrators and the department itself (null: none set)",
    }),
    isActive: z.boolean().meta({ description: "As recorded on chain" }),
    requireSignedRequests: z.boolean().optional().meta({
      description:
        "Extension: whether its API calls must be signed. Shown only to administrators and the department itself",
    }),
    createdAt: DateTime,
  })
  .meta({ id: "Department" });

export const DepartmentResponse = Department.extend({
  apiKey: z.string().meta({ description: "Shown only now: send it as X-API-Key with X-Department-Code" }),
  apiSecret: z.string().meta({ description: "Shown only now: the HMAC key of signed requests" }),
  transactionHash: z.string().meta({ description: "The on-chain registration" }),
}).meta({ id: "DepartmentResponse" });

export const DepartmentList = z.object({ departments: z.array(Department) });

export const RegeneratedKey = z
  .object({
    apiKey: z.string().meta({ description: "Shown only now; the previous key stopped working" }),
    apiSecret: z.string().meta({ description: "Shown only now; the previous secret stopped working" }),
    keyRotatedAt: DateTime,
  })
  .meta({ id: "RegeneratedDepartmentKey" });

export const StatsQuery = z
  .object({
    startDate: z.iso
      .date()
      .optional()
      .meta({ description: "First day (UTC), inclusive; default: the department's registration date" }),
    endDate: z.iso.date().optional().meta({ description: "Last day (UTC), inclusive; default: today" }),
  })
  .refine((q) => !q.startDate || !q.endDate || q.startDate <= q.endDate, {
    message: "startDate must not be after endDate",
    path: ["startDate"],
  });

export const DepartmentStatsResponse = z
  .object({
    departmentCode: z.string(),
    period: z.object({ startDate: z.iso.date(), endDate: z.iso.date() }),
    stats: z.object({
      totalReceived: z.int(),
      approved: z.int(),
      rejected: z.int(),
      pending: z.int(),
      avgProcessingTimeDays: z.number(),
    }),
  })
  .meta({ id: "DepartmentStats" });

export const KeyProofTypedDataInput = z
  .object({
    code: DepartmentCode,
    custody: Custody,
    walletAddress: WalletAddress.meta({ description: "The wallet that signs: the department's own address" }),
  })
  .meta({ id: "KeyProofTypedDataInput" });

export const KeyProofTypedData = z
  .object({
    types: z.record(z.string(), z.array(z.object({ name: z.string(), type: z.string() }))),
    primaryType: z.literal("DepartmentKey"),
    domain: z.object({
      name: z.string(),
      version: z.string(),
      chainId: z.number(),
      verifyingContract: z.string(),
      salt: z.string().meta({ description: "The deployment's salt (bytes32), from the registry's eip712Domain()" }),
    }),
    message: z.object({ code: z.string(), wallet: z.string(), custody: z.number() }),
  })
  .meta({ id: "KeyProofTypedData" });
