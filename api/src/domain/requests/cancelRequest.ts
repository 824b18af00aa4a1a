/** POST /requests/{id}/cancel: DRAFT or PENDING_RESUBMISSION → CANCELLED, on chain; the reason is kept off chain. */
import type { Principal } from "../../auth/principal.ts";
import { audited, type RequestMeta } from "../../stores/auditLog.ts";
import { approvalRegistryCall } from "../../chain/contractCalls.ts";
import type { DomainContext } from "../context.ts";
import { recordCancelReason } from "../../stores/requestStore.ts";
import { invalidState, loadOwnRequest } from "./requestGuards.ts";

export async function cancelRequest(
  context: DomainContext,
  principal: Principal,
  requestId: string,
  reason?: string,
  meta: RequestMeta = { principal },
) {
  const request = await loadOwnRequest(context, principal, requestId, "applications:write");
  if (request.status !== "DRAFT" && request.status !== "PENDING_RESUBMISSION") throw invalidState(request, "cancel");
  const tx = await context.gateway.send(
    {
      kind: "CANCEL",
      from: context.operator,
      to: context.contracts.ApprovalRegistry,
      data: approvalRegistryCall("cancel", [request.tokenId, 0]),
      requestId: request.id,
    },
    audited(
      meta,
      {
        entityType: "REQUEST",
        entityId: request.id,
        action: "CANCEL",
        oldValue: { status: request.status },
        newValue: { status: "CANCELLED", reason },
      },
      (client) => recordCancelReason(client, request.id, reason ?? null),
    ),
  );
  return cancellationAnswer(request.id, tx.hash);
}

/** The answer to a cancellation once its transaction is mined (also to a retry after a crash). */
export function cancellationAnswer(requestId: string, transactionHash: string) {
  return { requestId, status: "CANCELLED", transactionHash };
}
