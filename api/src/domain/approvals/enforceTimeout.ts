/**
 * A stage's deadline passed: the keeper asks the chain to apply the stage's timeout action (NOTIFY, ESCALATE or
 * AUTO_REJECT). The chain checks the deadline itself; this use case only makes sure the job is still about the
 * stage it was scheduled for. What follows (webhooks, timeline) comes from the transaction's events.
 */
import { audit, SYSTEM } from "../../stores/auditLog.ts";
import { progressOf } from "../../chain/contractReads.ts";
import { isRevert } from "../revertMapping.ts";
import { approvalRegistryCall } from "../../chain/contractCalls.ts";
import { timeoutPending } from "../../chain/contracts.ts";
import { requestIdOfToken } from "../../stores/requestStore.ts";
import type { DomainContext } from "../context.ts";

export interface StageDeadline {
  tokenId: string;
  stage: number;
  startedAt: number;
  deadline: number;
}

export type TimeoutOutcome =
  { outcome: "ENFORCED"; transactionHash: string } | { outcome: "STALE" } | { outcome: "NOT_YET"; retryAt: Date };

export async function enforceStageTimeout(
  context: Pick<DomainContext, "pool" | "gateway" | "contracts" | "operator">,
  job: StageDeadline,
): Promise<TimeoutOutcome> {
  const tokenId = BigInt(job.tokenId);
  const progress = await progressOf(context.gateway, context.contracts.ApprovalRegistry, tokenId);
  // The stage moved on, restarted or was handled since the job was scheduled.
  if (!timeoutPending(progress) || progress.stage !== job.stage || progress.stageStartedAt !== job.startedAt) {
    return { outcome: "STALE" };
  }
  const requestId = await requestIdOfToken(context.pool, job.tokenId);
  try {
    const tx = await context.gateway.send(
      {
        kind: "TIMEOUT",
        from: context.operator,
        to: context.contracts.ApprovalRegistry,
        data: approvalRegistryCall("enforceTimeout", [tokenId]),
        requestId,
      },
      {
        onRecorded: (client, recorded) =>
          requestId
            ? audit(client, SYSTEM, {
                entityType: "REQUEST",
                entityId: requestId,
                action: "STAGE_TIMEOUT",
                newValue: { stage: job.stage, deadline: new Date(job.deadline * 1000).toISOString() },
                txHash: recorded.hash,
              })
            : Promise.resolve(),
      },
    );
    return { outcome: "ENFORCED", transactionHash: tx.hash };
  } catch (error) {
    // The chain's clock is behind ours: try again at its deadline.
    if (isRevert(error, "TimeoutNotReached"))
      return { outcome: "NOT_YET", retryAt: new Date((Number(error.args[2]) + 1) * 1000) };
    if (isRevert(error, "TimeoutAlreadyHandled", "ReviewWrongPhase", "TimeoutNotSet")) return { outcome: "STALE" };
    throw error;
  }
}
