/**
 * Administration of departments: registration (custodial wallet from the configured signer + code ↔ wallet on chain,
 * sent by governance with the wallet's proof that it holds its key), updates (the active flag on chain, the rest off
 * chain) and API key regeneration. Every change writes an audit record in the same database
 * transaction (for chain writes: the one that records the transaction in the outbox). Audit values never carry
 * keys or secrets.
 *
 * A department's webhookUrl passes the same outbound check as webhook registrations (webhooks/urlSafety.ts, same
 * policy), and is shown, with requireSignedRequests, only to administrators and the department itself.
 */
import { getAddress } from "ethers";
import { stringToBytes32, type Hex } from "../../../../abis/index.ts";
import { withTransaction } from "../../db/transaction.ts";
import { audit, audited, type RequestMeta } from "../../stores/auditLog.ts";
import { ContractRevertError } from "../../chain/chainErrors.ts";
import { approvalRegistryCall, hexBytes } from "../../chain/contractCalls.ts";
import { CUSTODY_NAMES, type CustodyName } from "../../chain/contracts.ts";
import { apiErrorOf, rethrowAsApiError } from "../revertMapping.ts";
import { AppError, conflict, notFound } from "../errors.ts";
import { isAdmin, type Principal } from "../../auth/principal.ts";
import { checkWebhookUrl, webhookAddressPolicy } from "../../webhooks/urlSafety.ts";
import type { DomainContext } from "../context.ts";
import { departmentKeyTypedData, registryDomain } from "../approvals/decisionTypedData.ts";
import { awaitingGovernance, sendAsGovernance, type AwaitingGovernance } from "../governance.ts";
import { issueCredentials } from "./credentials.ts";
import type { Tx } from "../../db/queryable.ts";
import { isRegisteredOnChain } from "../../reads/departmentReads.ts";
import {
  DepartmentStore,
  deleteFailedRegistration,
  deleteRegistrationOf,
  departmentJson,
  insertDepartment,
  registrationStatusOf,
  replaceCredentials,
  updateDepartmentDetails,
  type DepartmentJson,
  type NewDepartment,
  type StoredDepartment,
} from "../../stores/departmentStore.ts";

export type Custody = CustodyName;
/** IApprovalRegistry.Custody value by name. */
const CUSTODY_ENUM = (custody: Custody) => CUSTODY_NAMES.indexOf(custody);

export interface CreateDepartmentInput {
  code: string;
  name: string;
  webhookUrl?: string;
  requireSignedRequests?: boolean;
  /** Default CUSTODIAL: the platform holds the wallet's key. DEPARTMENT_HELD: `walletAddress` is the department's own. */
  custody?: Custody;
  /** DEPARTMENT_HELD: the department's own address. CUSTODIAL with SIGNER=remote: a key of the remote signer (default: its first unused key). */
  walletAddress?: string;
  /** DEPARTMENT_HELD: the wallet's signature of the DepartmentKey typed data (keyProofToSign). */
  keyProof?: string;
}

export interface UpdateDepartmentInput {
  name?: string;
  webhookUrl?: string | null;
  isActive?: boolean;
  requireSignedRequests?: boolean;
}

export interface CreatedDepartment extends DepartmentJson {
  apiKey: string;
  apiSecret: string;
  transactionHash: string;
}

/**
 * The department as `viewer` may see it: its webhook URL (an internal integration endpoint) and whether its calls
 * must be signed (a hint about which keys are worth stealing) only for administrators and the department itself.
 */
export function departmentAsSeenBy<T extends DepartmentJson>(
  viewer: Principal | undefined,
  department: T,
): T | Omit<T, "webhookUrl" | "requireSignedRequests"> {
  if (isAdmin(viewer) || (viewer?.kind === "department" && viewer.code === department.code)) return department;
  const { webhookUrl: _url, requireSignedRequests: _signed, ...shown } = department;
  return shown;
}

/** 400 INVALID_WEBHOOK_URL (details.field "webhookUrl") unless the URL passes the webhooks' outbound check. */
async function checkDepartmentWebhookUrl(context: DomainContext, url: string | null | undefined): Promise<void> {
  if (url === undefined || url === null) return;
  try {
    await checkWebhookUrl(url, webhookAddressPolicy(context.config));
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    throw new AppError(error.status, error.code, error.message, { ...error.details, field: "webhookUrl" });
  }
}

const duplicate = (code: string) => conflict("CONFLICT", `Department ${code} already exists`, { code });

/** The DepartmentKey typed data a department wallet signs to prove it holds its key (registry's domain, with salt). */
export async function keyProofToSign(
  context: DomainContext,
  input: { code: string; custody: Custody; walletAddress: string },
) {
  return departmentKeyTypedData(await registryDomain(context), {
    code: stringToBytes32(input.code),
    wallet: getAddress(input.walletAddress),
    custody: CUSTODY_ENUM(input.custody),
  });
}

/**
 * The wallet's proof that it holds its key: a custodial wallet's is signed here by the configured signer; a
 * department that holds its own key gives its own (its Safe's EIP-1271 signature, for a Safe).
 */
async function keyProofOf(
  context: DomainContext,
  code: string,
  wallet: string,
  custody: Custody,
  given: string | undefined,
): Promise<Hex> {
  if (custody === "DEPARTMENT_HELD") return hexBytes(given!);
  const { types, domain, message, primaryType } = await keyProofToSign(context, {
    code,
    custody,
    walletAddress: wallet,
  });
  const { DepartmentKey } = types;
  return hexBytes(
    await context.departmentWallets.sign(wallet, {
      domain: { ...domain },
      types: { DepartmentKey },
      primaryType,
      message: { ...message },
    }),
  );
}

export async function createDepartment(
  context: DomainContext,
  meta: RequestMeta,
  input: CreateDepartmentInput,
): Promise<CreatedDepartment | AwaitingGovernance> {
  const { pool } = context;
  const { code } = input;
  await checkDepartmentWebhookUrl(context, input.webhookUrl);
  await claimCode(pool, code);
  const custody = input.custody ?? "CUSTODIAL";
  const wallet = await newDepartmentWallet(context, code, custody, input.walletAddress);
  const keyProof = await keyProofOf(context, code, wallet, custody, input.keyProof);
  const data = approvalRegistryCall("registerDepartment", [
    stringToBytes32(code),
    hexBytes(wallet),
    CUSTODY_ENUM(custody),
    keyProof,
  ]);
  if (!context.governance) return awaitingGovernance(context, data, `Registering department ${code}`);
  const credentials = await issueCredentials(context.departmentSecrets, code);
  const row = {
    code,
    name: input.name,
    webhookUrl: input.webhookUrl ?? null,
    walletAddress: wallet,
    apiKeyHash: credentials.apiKeyHash,
    apiSecretSealed: credentials.apiSecretSealed,
    requireSignedRequests: input.requireSignedRequests ?? false,
  };
  let recordedId: string | undefined;
  let createdAt = new Date();

  let tx;
  try {
    tx = await sendAsGovernance(
      context,
      { kind: "REGISTER_DEPARTMENT", to: context.contracts.ApprovalRegistry, data },
      // The department's row and its audit row, in the outbox record's database transaction.
      audited(
        meta,
        {
          entityType: "DEPARTMENT",
          entityId: code,
          action: "CREATE",
          newValue: {
            code,
            name: row.name,
            webhookUrl: row.webhookUrl,
            walletAddress: row.walletAddress,
            custody,
            requireSignedRequests: row.requireSignedRequests,
            isActive: true,
          },
        },
        async (client, recorded) => {
          recordedId = recorded.id;
          createdAt = await insertDepartment(client, { ...row, chainTxId: recorded.id });
        },
      ),
    );
  } catch (error) {
    throw await registrationRefused(error, pool, code, recordedId);
  }
  if (!tx) throw new Error("governance key went away while registering");

  const department = (await new DepartmentStore(pool).byCode(code)) ?? unindexedDepartment(row, custody, createdAt);
  return {
    ...departmentJson(department),
    apiKey: credentials.apiKey,
    apiSecret: credentials.apiSecret,
    transactionHash: tx.hash,
  };
}

/** Confirmed on chain but the index has not caught up yet (after 5 s): the answer from what we know. */
function unindexedDepartment(
  row: Omit<NewDepartment, "chainTxId">,
  custody: Custody,
  createdAt: Date,
): StoredDepartment {
  return {
    code: row.code,
    name: row.name,
    webhookUrl: row.webhookUrl,
    walletAddress: getAddress(row.walletAddress),
    custody,
    pendingWalletChange: null,
    isActive: true,
    requireSignedRequests: row.requireSignedRequests,
    chainDepartmentId: 0,
    createdAt,
    updatedAt: createdAt,
    keyRotatedAt: null,
  };
}

/** 409 CONFLICT for a code in use here or on chain; a code whose registration reverted on chain is freed first. */
async function claimCode(pool: DomainContext["pool"], code: string): Promise<void> {
  const existing = await registrationStatusOf(pool, code);
  if (existing === "FAILED") {
    // Its registration reverted on chain: the row was never visible; free the code.
    await deleteFailedRegistration(pool, code);
  } else if (existing) {
    throw duplicate(code);
  }
  // Registered on chain outside this API (no row here): the chain refuses the code anyway.
  if (await isRegisteredOnChain(pool, code)) throw duplicate(code);
}

/**
 * A department that holds its own key registers its address: no key of it ever reaches the platform. Otherwise
 * the key vault makes a new key, or a remote signer gives one of its keys (docs/decisions.md, "Custodial signers").
 */
async function newDepartmentWallet(
  context: DomainContext,
  code: string,
  custody: Custody,
  walletAddress: string | undefined,
): Promise<string> {
  return custody === "DEPARTMENT_HELD"
    ? getAddress(walletAddress!)
    : await context.departmentWallets.walletFor(code, { address: walletAddress });
}

/** The error to answer a failed registration with, after freeing the code of a registration that reverted. */
async function registrationRefused(
  error: unknown,
  pool: DomainContext["pool"],
  code: string,
  recordedId: string | undefined,
): Promise<unknown> {
  if (error instanceof ContractRevertError) {
    // Mined and reverted (e.g. registered elsewhere meanwhile): the row must not keep the code.
    if (recordedId) await deleteRegistrationOf(pool, recordedId);
    // A code registered meanwhile is the same 409 CONFLICT as one registered before (the spec's duplicate).
    return apiErrorOf(error, { DepartmentAlreadyRegistered: () => duplicate(code) });
  }
  // Two registrations of the same code at once: the second row insert fails and nothing is recorded for it.
  if ((error as { code?: string }).code === "23505") return duplicate(code);
  return error;
}

export async function updateDepartment(
  context: DomainContext,
  meta: RequestMeta,
  code: string,
  input: UpdateDepartmentInput,
): Promise<{ department: StoredDepartment; transactionHash: string | null }> {
  const store = new DepartmentStore(context.pool);
  const current = await store.byCode(code);
  if (!current) throw notFound("Department");
  await checkDepartmentWebhookUrl(context, input.webhookUrl);

  const oldValue: Record<string, unknown> = {};
  const newValue: Record<string, unknown> = {};
  for (const field of ["name", "webhookUrl", "requireSignedRequests"] as const)
    if (input[field] !== undefined && input[field] !== current[field])
      [oldValue[field], newValue[field]] = [current[field], input[field]];
  const offChainChange = Object.keys(newValue).length > 0;
  const activeChange = input.isActive !== undefined && input.isActive !== current.isActive;

  const apply = async (client: Tx, txHash?: string) => {
    if (offChainChange) {
      const { name, webhookUrl, requireSignedRequests } = { ...current, ...newValue } as StoredDepartment;
      await updateDepartmentDetails(client, code, { name, webhookUrl, requireSignedRequests });
      await audit(client, meta, { entityType: "DEPARTMENT", entityId: code, action: "UPDATE", oldValue, newValue });
    }
    if (activeChange) {
      await audit(client, meta, {
        entityType: "DEPARTMENT",
        entityId: code,
        action: input.isActive ? "ACTIVATE" : "DEACTIVATE",
        oldValue: { isActive: current.isActive },
        newValue: { isActive: input.isActive },
        txHash,
      });
    }
  };

  let transactionHash: string | null = null;
  if (activeChange) {
    const tx = await context.gateway.send(
      {
        kind: "UPDATE_DEPARTMENT",
        from: context.administrator,
        to: context.contracts.ApprovalRegistry,
        data: approvalRegistryCall("setDepartmentActive", [stringToBytes32(code), input.isActive === true]),
      },
      { onRecorded: (client, recorded) => apply(client, recorded.hash) },
    );
    transactionHash = tx.hash;
  } else if (offChainChange) {
    await withTransaction(context.pool, apply);
  }
  return { department: (await store.byCode(code)) ?? current, transactionHash };
}

export async function regenerateApiKey(
  context: DomainContext,
  meta: RequestMeta,
  code: string,
): Promise<{ apiKey: string; apiSecret: string; keyRotatedAt: string }> {
  const current = await new DepartmentStore(context.pool).byCode(code);
  if (!current) throw notFound("Department");
  const credentials = await issueCredentials(context.departmentSecrets, code);
  return withTransaction(context.pool, async (client) => {
    const { previousRotatedAt, rotatedAt } = await replaceCredentials(client, code, credentials);
    await audit(client, meta, {
      entityType: "DEPARTMENT",
      entityId: code,
      action: "REGENERATE_KEY",
      oldValue: { keyRotatedAt: previousRotatedAt?.toISOString() ?? null },
      newValue: { keyRotatedAt: rotatedAt.toISOString() },
    });
    return { apiKey: credentials.apiKey, apiSecret: credentials.apiSecret, keyRotatedAt: rotatedAt.toISOString() };
  });
}

/**
 * Proposes a new wallet (or custody) for a department on chain. It takes effect only after the registry's public
 * delay (walletDelay), when anyone activates it; until then the department's current wallet or an administrator
 * can cancel it. So no administrator can make a wallet decide for a department without the department and every
 * auditor seeing it first.
 */
export async function proposeWalletChange(
  context: DomainContext,
  meta: RequestMeta,
  code: string,
  input: { custody: Custody; walletAddress?: string; keyProof?: string },
): Promise<{ department: StoredDepartment; transactionHash: string } | AwaitingGovernance> {
  const current = await new DepartmentStore(context.pool).byCode(code);
  if (!current) throw notFound("Department");
  const wallet =
    input.custody === "DEPARTMENT_HELD"
      ? getAddress(input.walletAddress!)
      : await context.departmentWallets.walletFor(code);
  const keyProof = await keyProofOf(context, code, wallet, input.custody, input.keyProof);
  const data = approvalRegistryCall("proposeDepartmentWallet", [
    stringToBytes32(code),
    hexBytes(wallet),
    CUSTODY_ENUM(input.custody),
    keyProof,
  ]);
  if (!context.governance) return awaitingGovernance(context, data, `A new wallet for department ${code}`);
  try {
    const tx = await sendAsGovernance(
      context,
      { kind: "UPDATE_DEPARTMENT", to: context.contracts.ApprovalRegistry, data },
      audited(meta, {
        entityType: "DEPARTMENT",
        entityId: code,
        action: "PROPOSE_WALLET",
        oldValue: { walletAddress: current.walletAddress, custody: current.custody },
        newValue: { walletAddress: wallet, custody: input.custody },
      }),
    );
    if (!tx) throw new Error("governance key went away while proposing a wallet");
    return { department: (await new DepartmentStore(context.pool).byCode(code)) ?? current, transactionHash: tx.hash };
  } catch (error) {
    rethrowAsApiError(error);
  }
}

/** The platform holds no key of a department-held wallet: the answer is the transaction the department sends. */
function ownTransactionRequired(context: DomainContext, department: StoredDepartment, data: string) {
  const transaction = {
    from: department.walletAddress,
    to: context.contracts.ApprovalRegistry,
    data,
    chainId: context.config.chainId,
  };
  return conflict(
    "OWN_TRANSACTION_REQUIRED",
    "Your department holds its own key, so only your wallet can refuse the change: send details.transaction from it (from a Safe: as a Safe transaction). Nothing was sent",
    { custody: department.custody, wallet: department.walletAddress, transaction },
  );
}

/**
 * Settles a pending wallet change on chain. CANCEL: an administrator withdraws it (from the administration wallet).
 * REFUSE: the department itself withdraws it, from its current wallet, which the contract accepts as well: the
 * platform signs for a custodial department; a department that holds its own key sends the transaction itself
 * (409 OWN_TRANSACTION_REQUIRED gives it). ACTIVATE: anyone once due (sent by the operator).
 */
export async function settleWalletChange(
  context: DomainContext,
  meta: RequestMeta,
  code: string,
  action: "CANCEL" | "REFUSE" | "ACTIVATE",
) {
  const current = await new DepartmentStore(context.pool).byCode(code);
  if (!current) throw notFound("Department");
  const pending = current.pendingWalletChange;
  if (!pending) throw conflict("NO_WALLET_CHANGE", "The department has no pending wallet change");
  if (action === "ACTIVATE" && pending.effectiveAt.getTime() > Date.now()) {
    throw conflict(
      "WALLET_CHANGE_NOT_DUE",
      `The wallet change can be activated from ${pending.effectiveAt.toISOString()}`,
      { effectiveAt: pending.effectiveAt.toISOString() },
    );
  }
  const data = approvalRegistryCall(action === "ACTIVATE" ? "activateDepartmentWallet" : "cancelDepartmentWallet", [
    stringToBytes32(code),
  ]);
  if (action === "REFUSE" && current.custody === "DEPARTMENT_HELD")
    throw ownTransactionRequired(context, current, data);
  const from = { CANCEL: context.administrator, REFUSE: current.walletAddress, ACTIVATE: context.operator }[action];
  try {
    const tx = await context.gateway.send(
      { kind: "UPDATE_DEPARTMENT", from, to: context.contracts.ApprovalRegistry, data },
      audited(meta, {
        entityType: "DEPARTMENT",
        entityId: code,
        action: action === "ACTIVATE" ? "ACTIVATE_WALLET" : "CANCEL_WALLET",
        oldValue: { walletAddress: current.walletAddress, custody: current.custody },
        newValue: { walletAddress: pending.walletAddress, custody: pending.custody },
      }),
    );
    return { department: (await new DepartmentStore(context.pool).byCode(code)) ?? current, transactionHash: tx.hash };
  } catch (error) {
    // The chain's clock decides: a change not yet due by block time (WALLET_CHANGE_NOT_DUE).
    rethrowAsApiError(error);
  }
}
