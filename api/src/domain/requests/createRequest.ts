/**
 * POST /requests: mints the request's soulbound token (Draft) to a custodial address of its own, pinned on chain
 * to the active workflow version of its type. The request row is written in the same database transaction as the
 * outbox record and is visible once the mint is on chain.
 */
import { randomUUID } from "node:crypto";
import { isAdmin, type Principal } from "../../auth/principal.ts";
import { audit, type RequestMeta } from "../../stores/auditLog.ts";
import type { RecordedTx } from "../../chain/chainGateway.ts";
import { hexBytes, licenceTokenCall } from "../../chain/contractCalls.ts";
import { stringToBytes32 } from "../../../../abis/index.ts";
import { AppError, conflict, forbidden } from "../errors.ts";
import type { DomainContext } from "../context.ts";
import type { Db, Tx } from "../../db/queryable.ts";
import {
  insertRequest,
  lockApplicantRequests,
  type NewRequest,
  nextRequestNumber,
  nextTokenId,
  requestsCreatedInLastDay,
} from "../../stores/requestStore.ts";
import { applicantCommitment, newSalt } from "./applicantCommitment.ts";
import { applicantIdentityOnRecord, liveDelegation } from "../../stores/delegationStore.ts";

export const REQUEST_NUMBER_PREFIX: Record<string, string> = {
  RESORT_LICENSE: "RL",
  TRADE_LICENSE: "TL",
  BUILDING_PERMIT: "BP",
};

export interface CreateRequestInput {
  applicantId: string;
  requestType: "RESORT_LICENSE" | "TRADE_LICENSE" | "BUILDING_PERMIT";
  metadata?: Record<string, unknown>;
}

export async function createRequest(
  context: DomainContext,
  principal: Principal,
  input: CreateRequestInput,
  meta: RequestMeta = { principal },
) {
  const contact = await applicantContact(context, principal, input.applicantId);
  checkMetadataSize(input.metadata, context.config.maxMetadataBytes);
  await checkQuota(context, input.applicantId);
  await requireActiveWorkflow(context, input.requestType);

  const id = randomUUID();
  const tokenId = await nextTokenId(context.pool);
  // An address of its own for each licence: the chain does not link one applicant's licences.
  const address = context.applicantAddress(input.applicantId, id);
  const salt = newSalt();
  const metadata = input.metadata ?? {};
  let requestNumber = "";
  let createdAt = new Date();

  const tx = await context.gateway.send(
    {
      kind: "MINT_NFT",
      from: context.operator,
      to: context.contracts.LicenceToken,
      data: licenceTokenCall("mint", [
        hexBytes(address),
        tokenId,
        stringToBytes32(input.requestType),
        hexBytes(applicantCommitment(salt, input.applicantId)),
      ]),
      requestId: id,
    },
    {
      onRecorded: async (client, recorded) => {
        // The quota is counted and the row inserted under the applicant's lock, in the outbox record's transaction:
        // a creation over the quota rolls back its record, so nothing is sent.
        await lockApplicantRequests(client, input.applicantId);
        await checkQuota(context, input.applicantId, client);
        ({ requestNumber, createdAt } = await recordRequest(client, meta, recorded, {
          id,
          tokenId,
          requestType: input.requestType,
          applicantId: input.applicantId,
          ...contact,
          applicantAddress: address,
          metadata,
          createdBy: `${principal.kind}:${principal.id}`,
          identitySalt: salt,
        }));
      },
    },
  );
  return {
    requestId: id,
    requestNumber,
    status: "DRAFT",
    transactionHash: tx.hash,
    createdAt: createdAt.toISOString(),
  };
}

/** 409 NO_ACTIVE_WORKFLOW when no workflow version of the type is active: a new request is pinned to the active one. */
async function requireActiveWorkflow(context: DomainContext, requestType: CreateRequestInput["requestType"]) {
  const workflow = await context.workflows.active(requestType);
  if (!workflow) {
    throw conflict(
      "NO_ACTIVE_WORKFLOW",
      `No active workflow for ${requestType}: requests of this type cannot be created now`,
      {
        requestType,
      },
    );
  }
}

/**
 * Who may create a request for `applicantId`, and the name and e-mail it carries (the name is published on the
 * licence): always the applicant's own identity, never the caller's body. An applicant creates for themself, from
 * their sign-in; a system client only for an applicant with a live delegation to it, from the sign-in they granted
 * it with (403 otherwise); an administrator for anyone, from what the applicant's own sign-ins last recorded.
 */
async function applicantContact(
  context: DomainContext,
  principal: Principal,
  applicantId: string,
): Promise<{ applicantName: string | null; applicantEmail: string | null }> {
  if (principal.kind === "applicant") {
    if (principal.id !== applicantId) throw forbidden("applicantId must be your own identity-locker id");
    return { applicantName: principal.name ?? null, applicantEmail: principal.email ?? null };
  }
  if (principal.kind === "client" && isAdmin(principal)) return applicantIdentityOnRecord(context.pool, applicantId);
  const delegation =
    principal.kind === "client" ? await liveDelegation(context.pool, principal.id, applicantId) : undefined;
  if (!delegation) throw forbidden("The applicant has not delegated to this client (POST /delegations)");
  return delegation;
}

/**
 * The request row (numbered now, in the outbox record's database transaction, so numbers follow the order the mints
 * were recorded in) and its audit row.
 */
async function recordRequest(
  client: Tx,
  meta: RequestMeta,
  recorded: RecordedTx,
  row: Omit<NewRequest, "requestNumber" | "chainTxId">,
): Promise<{ requestNumber: string; createdAt: Date }> {
  const prefix = REQUEST_NUMBER_PREFIX[row.requestType];
  const year = new Date().getUTCFullYear();
  const counter = await nextRequestNumber(client, prefix, year);
  const requestNumber = `${prefix}-${year}-${String(counter).padStart(6, "0")}`;
  const createdAt = await insertRequest(client, { ...row, requestNumber, chainTxId: recorded.id });
  await audit(client, meta, {
    entityType: "REQUEST",
    entityId: row.id,
    action: "CREATE",
    newValue: {
      requestNumber,
      requestType: row.requestType,
      applicantId: row.applicantId,
      tokenId: row.tokenId.toString(),
      status: "DRAFT",
    },
    txHash: recorded.hash,
  });
  return { requestNumber, createdAt };
}

/** metadata is stored and returned whole: its serialized size is capped (400 METADATA_TOO_LARGE). */
function checkMetadataSize(metadata: Record<string, unknown> | undefined, maxBytes: number): void {
  if (!metadata) return;
  const size = Buffer.byteLength(JSON.stringify(metadata), "utf8");
  if (size > maxBytes)
    throw new AppError(400, "METADATA_TOO_LARGE", `metadata may hold at most ${maxBytes} bytes of JSON (got ${size})`, {
      maxBytes,
      size,
    });
}

/**
 * Every request mints through the shared operator wallet: an applicant may create at most REQUEST_QUOTA_PER_DAY
 * requests in any 24 hours (429 QUOTA_EXCEEDED). Checked early (nothing signed) and again, atomically, with `tx`.
 */
async function checkQuota(context: DomainContext, applicantId: string, tx: Db = context.pool): Promise<void> {
  const quota = context.config.requestQuotaPerDay;
  if (quota <= 0) return;
  if ((await requestsCreatedInLastDay(tx, applicantId)) >= quota) {
    throw new AppError(429, "QUOTA_EXCEEDED", `An applicant may create at most ${quota} requests in 24 hours`, {
      quota,
      windowHours: 24,
    });
  }
}
