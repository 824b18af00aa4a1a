/**
 * POST /requests: mints the request's soulbound token (Draft) to the applicant's custodial address, pinned on chain
 * to the active workflow version of its type. The request row is written in the same database transaction as the
 * outbox record and is visible once the mint is on chain.
 */
import { randomUUID } from "node:crypto";
import type { Principal } from "../../auth/principal.ts";
import { audit, type RequestMeta } from "../../audit/auditLog.ts";
import { hexBytes, licenceTokenCall } from "../../chain/contractCalls.ts";
import { stringToBytes32 } from "../../../../abis/index.ts";
import { AppError, conflict, forbidden } from "../../errors.ts";
import type { DomainContext } from "../context.ts";
import { insertRequest, nextRequestNumber, nextTokenId, requestsCreatedInLastDay } from "../../stores/requestStore.ts";
import { applicantCommitment, newSalt } from "./applicantCommitment.ts";

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
  // An applicant creates requests for themself; a system client with applications:write acts for any applicant.
  if (principal.kind === "applicant" && principal.id !== input.applicantId)
    throw forbidden("applicantId must be your own identity-locker id");
  checkMetadataSize(input.metadata, context.config.maxMetadataBytes);
  await checkQuota(context, input.applicantId);
  const workflow = await context.workflows.active(input.requestType);
  if (!workflow) {
    throw conflict(
      "NO_ACTIVE_WORKFLOW",
      `No active workflow for ${input.requestType}: requests of this type cannot be created now`,
      { requestType: input.requestType },
    );
  }

  const id = randomUUID();
  const tokenId = await nextTokenId(context.pool);
  const address = context.applicantAddress(input.applicantId);
  const salt = newSalt();
  const metadata = input.metadata ?? {};
  const applicantName =
    principal.kind === "applicant"
      ? (principal.name ?? null)
      : typeof metadata.applicantName === "string"
        ? metadata.applicantName
        : null;
  const applicantEmail =
    principal.kind === "applicant"
      ? (principal.email ?? null)
      : typeof metadata.applicantEmail === "string"
        ? metadata.applicantEmail
        : null;
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
        const prefix = REQUEST_NUMBER_PREFIX[input.requestType];
        const year = new Date().getUTCFullYear();
        const counter = await nextRequestNumber(client, prefix, year);
        requestNumber = `${prefix}-${year}-${String(counter).padStart(6, "0")}`;
        createdAt = await insertRequest(client, {
          id,
          requestNumber,
          tokenId,
          requestType: input.requestType,
          applicantId: input.applicantId,
          applicantName,
          applicantEmail,
          applicantAddress: address,
          metadata,
          createdBy: `${principal.kind}:${principal.id}`,
          chainTxId: recorded.id,
          identitySalt: salt,
        });
        await audit(client, meta, {
          entityType: "REQUEST",
          entityId: id,
          action: "CREATE",
          newValue: {
            requestNumber,
            requestType: input.requestType,
            applicantId: input.applicantId,
            tokenId: tokenId.toString(),
            status: "DRAFT",
          },
          txHash: recorded.hash,
        });
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
 * requests in any 24 hours (429 QUOTA_EXCEEDED). A soft limit: concurrent creations may pass it by a few.
 */
async function checkQuota(context: DomainContext, applicantId: string): Promise<void> {
  const quota = context.config.requestQuotaPerDay;
  if (quota <= 0) return;
  if ((await requestsCreatedInLastDay(context.pool, applicantId)) >= quota) {
    throw new AppError(429, "QUOTA_EXCEEDED", `An applicant may create at most ${quota} requests in 24 hours`, {
      quota,
      windowHours: 24,
    });
  }
}
