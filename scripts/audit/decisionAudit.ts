/**
 * Every decision of a licence, from DecisionRecorded, with the wallet that sent it checked against the
 * department's registered wallet at that point; what became of each decision (from the later events and the
 * current `decisionsOf`); and the approvals standing now. The current state must be explained by the events:
 * every non-pending position of `decisionsOf` by its department's last decision in that stage.
 */
import { DECISION_NAMES, type DecisionAudit, type StandingApproval } from "./auditRecord.ts";
import type { ContractViews } from "./contractViews.ts";
import type { DepartmentWallets } from "./departmentWallets.ts";
import { isBefore, type ChainEvent } from "./logReader.ts";
import type { TransactionLookups } from "./transactionLookups.ts";

/** Each stage's positions as `decisionsOf` returns them at the audited block. */
export type StageLedgers = { departmentId: number; status: number }[][];

export async function readStageLedgers(views: ContractViews, tokenId: number, stageCount: number, reviewStarted: boolean): Promise<StageLedgers> {
  // Before submission decisionsOf answers nothing: no stage has a ledger yet.
  if (!reviewStarted) return [];
  return Promise.all(Array.from({ length: stageCount }, (_, stage) => views.decisionsOf(tokenId, stage)));
}

export async function auditDecisions(
  events: ChainEvent[],
  ledgers: StageLedgers,
  departments: DepartmentWallets,
  lookups: Pick<TransactionLookups, "senderOf" | "timeOf">,
  findings: string[],
): Promise<{ decisions: DecisionAudit[]; approvals: StandingApproval[] }> {
  const recorded = events.filter((e) => e.name === "DecisionRecorded");
  const invalidations = events.filter((e) => e.name === "ReviewInvalidated");
  const key = (e: ChainEvent) => `${Number(e.args.stage)}:${Number(e.args.departmentId)}`;
  const currentStatus = (stage: number, departmentId: number) => ledgers[stage]?.find((p) => p.departmentId === departmentId)?.status;

  const decisions = await Promise.all(
    recorded.map(async (event, i): Promise<DecisionAudit> => {
      const stage = Number(event.args.stage);
      const departmentId = Number(event.args.departmentId);
      const decision = DECISION_NAMES[Number(event.args.decision)];
      const code = departments.codeOf(departmentId) ?? `#${departmentId}`;
      const sender = await lookups.senderOf(event.transactionHash);
      const departmentWallet = departments.walletAt(departmentId, event) ?? "(not registered)";
      const walletMatches = sender === departmentWallet;
      if (!walletMatches) {
        findings.push(`decision ${decision} of ${code} in stage ${stage} (tx ${event.transactionHash}) was sent by ${sender}, but the department's wallet at block ${event.blockNumber} was ${departmentWallet}`);
      }

      const next = recorded.slice(i + 1).find((later) => key(later) === key(event));
      const invalidation = invalidations.find((inv) => key(inv) === key(event) && isBefore(event, inv) && (!next || isBefore(inv, next)));
      let fate: DecisionAudit["fate"];
      if (invalidation && decision === "APPROVED") fate = "INVALIDATED";
      else if (next) fate = "SUPERSEDED";
      else {
        const status = currentStatus(stage, departmentId);
        if (status === undefined || DECISION_NAMES[status] === "PENDING") fate = "CLEARED";
        else if (DECISION_NAMES[status] === decision) fate = "STANDING";
        else {
          fate = "CONTRADICTED";
          findings.push(`decisionsOf says ${code} is ${DECISION_NAMES[status]} in stage ${stage}, but its last recorded decision there is ${decision} (tx ${event.transactionHash})`);
        }
      }

      return {
        stage,
        departmentId,
        departmentCode: code,
        decision,
        reasonCode: Number(event.args.reasonCode),
        reviewed: reviewedVersions(Number(event.args.reviewedMask), BigInt(event.args.documentVersions)),
        remarksHash: event.args.remarksHash,
        sender,
        departmentWallet,
        walletMatches,
        fate,
        ...(fate === "INVALIDATED"
          ? { invalidatedBy: { docIndex: Number(invalidation!.args.docIndex), newVersion: Number(invalidation!.args.newVersion), transactionHash: invalidation!.transactionHash, blockNumber: invalidation!.blockNumber } }
          : {}),
        transactionHash: event.transactionHash,
        blockNumber: event.blockNumber,
        timestamp: await lookups.timeOf(event.blockNumber),
      };
    }),
  );

  const approvals: StandingApproval[] = [];
  ledgers.forEach((positions, stage) => {
    for (const { departmentId, status } of positions) {
      const name = DECISION_NAMES[status];
      if (name === "PENDING") continue;
      const code = departments.codeOf(departmentId) ?? `#${departmentId}`;
      const last = decisions.filter((d) => d.stage === stage && d.departmentId === departmentId).at(-1);
      // REVIEW_REQUIRED is an approval a new document version invalidated; any other status is the last decision itself.
      const explained = name === "REVIEW_REQUIRED" ? last?.fate === "INVALIDATED" : last?.fate === "STANDING";
      if (!explained) {
        // A CONTRADICTED decision was reported above.
        if (last?.fate !== "CONTRADICTED") findings.push(`decisionsOf says ${code} is ${name} in stage ${stage}, but ${last ? `its last recorded decision there is ${last.decision} (${last.fate})` : "no decision of it was recorded there"}`);
        continue;
      }
      if (name === "APPROVED") approvals.push({ stage, departmentCode: code, approvedAt: last!.timestamp, transactionHash: last!.transactionHash });
    }
  });
  return { decisions, approvals };
}

/** The versions a decision reviewed: bit i of the mask is document i; its version is in the packed word. */
function reviewedVersions(mask: number, packed: bigint): { docIndex: number; version: number }[] {
  const reviewed: { docIndex: number; version: number }[] = [];
  for (let docIndex = 0; docIndex < 16; docIndex++) {
    if ((mask >> docIndex) & 1) reviewed.push({ docIndex, version: Number((packed >> BigInt(16 + 15 * docIndex)) & 0x7fffn) });
  }
  return reviewed;
}
