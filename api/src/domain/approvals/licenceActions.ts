/**
 * Administrators' actions on issued licences: suspend (APPROVED → SUSPENDED), reinstate (SUSPENDED → APPROVED),
 * revoke (APPROVED or SUSPENDED → REVOKED, final). On chain from the operator wallet (it holds ADMIN_ROLE), with a
 * reason code on chain and the reason text off chain.
 */
import { audited, type RequestMeta } from "../../stores/auditLog.ts";
import { rethrowAsApiError } from "../revertMapping.ts";
import { licenceTokenCall } from "../../chain/contractCalls.ts";
import { notFound } from "../errors.ts";
import { findRequest } from "../../reads/requestReads.ts";
import type { DomainContext } from "../context.ts";
import { insertLicenceAction } from "../../stores/licenceActionReasons.ts";
import { invalidState } from "../requests/requestGuards.ts";

export type LicenceAction = "SUSPEND" | "REINSTATE" | "REVOKE";

const FROM: Record<LicenceAction, string[]> = {
  SUSPEND: ["APPROVED"],
  REINSTATE: ["SUSPENDED"],
  REVOKE: ["APPROVED", "SUSPENDED", "EXPIRED"],
};
const TO: Record<LicenceAction, string> = { SUSPEND: "SUSPENDED", REINSTATE: "APPROVED", REVOKE: "REVOKED" };

export async function actOnLicence(
  context: DomainContext,
  meta: RequestMeta,
  requestId: string,
  action: LicenceAction,
  reasonCode: number,
  reason?: string,
) {
  const request = await findRequest(context.pool, requestId);
  if (!request) throw notFound("Request");
  if (!FROM[action].includes(request.status)) throw invalidState(request, action.toLowerCase());
  const data =
    action === "SUSPEND"
      ? licenceTokenCall("suspend", [request.tokenId, reasonCode])
      : action === "REVOKE"
        ? licenceTokenCall("revoke", [request.tokenId, reasonCode])
        : licenceTokenCall("reinstate", [request.tokenId]);
  try {
    const tx = await context.gateway.send(
      { kind: "REVOKE", from: context.administrator, to: context.contracts.LicenceToken, data, requestId: request.id },
      audited(
        meta,
        {
          entityType: "REQUEST",
          entityId: request.id,
          action,
          oldValue: { status: request.status },
          newValue: { status: TO[action], reasonCode, reason },
        },
        (client, recorded) =>
          insertLicenceAction(client, {
            txHash: recorded.hash,
            requestId: request.id,
            action,
            reasonCode: action === "REINSTATE" ? null : reasonCode,
            reason: reason ?? null,
            chainTxId: recorded.id,
          }),
      ),
    );
    return licenceActionAnswer(request.id, action, tx.hash);
  } catch (error) {
    // The message names the request's status and the action (the table's is generic).
    rethrowAsApiError(error, { LicenceInvalidTransition: () => invalidState(request, action.toLowerCase()) });
  }
}

/** The answer to a licence action once its transaction is mined (also to a retry after a crash). */
export function licenceActionAnswer(requestId: string, action: LicenceAction, transactionHash: string) {
  return { requestId, status: TO[action], transactionHash };
}
