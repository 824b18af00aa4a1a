/**
 * An administrator resolves an escalated stage (a rejection with onRejection ESCALATE, or a timeout with ESCALATE):
 * REJECT upholds it (the request is rejected, with a reason code), RETURN sends it back (a rejecting department
 * decides again and the stage's clock restarts). An administrator never approves for a department.
 */
import { audited, type RequestMeta } from "../../stores/auditLog.ts";
import { rethrowAsApiError } from "../revertMapping.ts";
import { approvalRegistryCall } from "../../chain/contractCalls.ts";
import { conflict, notFound } from "../errors.ts";
import { findRequest } from "../../reads/requestReads.ts";
import type { DomainContext } from "../context.ts";

export async function resolveEscalation(
  context: DomainContext,
  meta: RequestMeta,
  requestId: string,
  decision: "REJECT" | "RETURN",
  reasonCode: number,
  remarks?: string,
) {
  const request = await findRequest(context.pool, requestId);
  if (!request) throw notFound("Request");
  if (request.phase !== "ESCALATED")
    throw conflict("NOT_ESCALATED", "The request has no escalation waiting for an administrator", {
      currentStatus: request.status,
    });
  try {
    const tx = await context.gateway.send(
      {
        kind: "ESCALATION",
        from: context.administrator,
        to: context.contracts.ApprovalRegistry,
        data: approvalRegistryCall("resolveEscalation", [
          request.tokenId,
          decision === "REJECT",
          decision === "REJECT" ? reasonCode : 0,
        ]),
        requestId: request.id,
      },
      audited(meta, {
        entityType: "REQUEST",
        entityId: request.id,
        action: `ESCALATION_${decision}`,
        oldValue: { status: request.status, stage: request.stage },
        newValue: { decision, reasonCode, remarks },
      }),
    );
    return escalationAnswer(context, request.id, tx.hash);
  } catch (error) {
    // Here the wrong phase means there is no escalation to resolve (the table says "not under review").
    rethrowAsApiError(error, {
      ReviewWrongPhase: () => conflict("NOT_ESCALATED", "The request has no escalation waiting for an administrator"),
    });
  }
}

/** The answer to a resolved escalation once its transaction is mined: the request's status as the index has it. */
export async function escalationAnswer(context: DomainContext, requestId: string, transactionHash: string) {
  const after = await findRequest(context.pool, requestId);
  if (!after) throw notFound("Request");
  return { requestId, status: after.status, transactionHash };
}
