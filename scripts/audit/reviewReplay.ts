/**
 * A licence's review replayed from events alone, by the rules of its workflow version as registered
 * (WorkflowStageRegistered), so that none of the registry's own verdicts is taken on trust: who could decide when,
 * what each document anchored under review had to invalidate and reopen, and every stage's rule at issuance.
 */
import { stageNumber } from "../../abis/index.ts";
import { STATUS_NAMES } from "./auditRecord.ts";
import type { DepartmentWallets, WorkflowStage } from "./departmentWallets.ts";
import { stageRuleUnmet, type Position } from "./issuanceAudit.ts";
import type { ChainEvent } from "./logReader.ts";

// DecisionStatus values (IApprovalRegistry).
const PENDING = 0;
const APPROVED = 1;
const CHANGES_REQUESTED = 3;
const REVIEW_REQUIRED = 4;

type Slot = { status: number; mask: number };

export function replayReview(
  events: ChainEvent[],
  departments: Pick<DepartmentWallets, "stagesOf" | "codeOf">,
): string[] {
  const findings: string[] = [];
  const started = events.find((e) => e.name === "ReviewStarted");
  if (!started) return findings;
  const workflowId = Number(started.args.workflowId);
  const stages = departments.stagesOf(workflowId);
  if (!stages?.length) {
    findings.push(
      `workflow version ${workflowId}, to which the licence is pinned, has no WorkflowStageRegistered event: its rules cannot be replayed`,
    );
    return findings;
  }
  const name = (departmentId: number) => departments.codeOf(departmentId) ?? `#${departmentId}`;
  const ledgers = new Map<number, Slot[]>();
  const ledger = (stage: number): Slot[] => {
    if (!ledgers.has(stage))
      ledgers.set(
        stage,
        (stages[stage]?.departmentIds ?? []).map(() => ({ status: PENDING, mask: 0 })),
      );
    return ledgers.get(stage)!;
  };
  const positionOf = (stage: number, departmentId: number) => stages[stage]?.departmentIds.indexOf(departmentId) ?? -1;

  let current: number | undefined;
  let inReview = false;
  let closed = false;
  for (const [i, e] of events.entries()) {
    const tx = `tx ${e.transactionHash}`;
    switch (e.name) {
      case "ReviewStarted":
      case "Resubmitted":
        inReview = true;
        break;
      case "StageStarted":
        current = Number(e.args.stage);
        break;
      case "StageRetried":
      case "StageEscalated":
        inReview = false;
        break;
      case "EscalationResolved":
        if (!e.args.rejected) inReview = true;
        break;
      case "DecisionRecorded": {
        const stage = Number(e.args.stage);
        const departmentId = Number(e.args.departmentId);
        const what = `the decision of ${name(departmentId)} in stage ${stageNumber(stage)} (${tx})`;
        const rule = stages[stage];
        const position = positionOf(stage, departmentId);
        if (!rule || position < 0) {
          findings.push(
            `${what}: ${name(departmentId)} is not a department of that stage in workflow version ${workflowId}`,
          );
          break;
        }
        if (stage !== current)
          findings.push(
            `${what} was made while the review was in stage ${current === undefined ? "none" : stageNumber(current)}`,
          );
        if (!inReview || closed) findings.push(`${what} was made while the request was not under review`);
        const slots = ledger(stage);
        if (slots[position].status !== PENDING && slots[position].status !== REVIEW_REQUIRED)
          findings.push(`${what}: ${name(departmentId)} had already decided there and was not asked to decide again`);
        if (rule.executionType === 0) {
          const turn = slots.findIndex((s) => s.status !== APPROVED);
          if (turn !== position)
            findings.push(
              `${what} was out of turn in a SEQUENTIAL stage: it was ${turn < 0 ? "nobody" : name(rule.departmentIds[turn])}'s turn`,
            );
        }
        const decision = Number(e.args.decision);
        slots[position] = { status: decision, mask: Number(e.args.reviewedMask) };
        if (decision === CHANGES_REQUESTED) inReview = false;
        break;
      }
      case "ReviewInvalidated": {
        const stage = Number(e.args.stage);
        const position = positionOf(stage, Number(e.args.departmentId));
        if (position >= 0) ledger(stage)[position].status = REVIEW_REQUIRED;
        break;
      }
      case "DecisionsReset": {
        const stage = Number(e.args.stage);
        const mask = Number(e.args.positionsMask);
        ledger(stage).forEach((slot, p) => {
          if ((mask >> p) & 1) Object.assign(slot, { status: PENDING, mask: 0 });
        });
        break;
      }
      case "DocumentAnchored":
        if (!closed && current !== undefined)
          findings.push(...invalidationFindings(e, events.slice(i + 1), ledgers, stages, current, name));
        break;
      case "LicenceStatusChanged": {
        const from = STATUS_NAMES[Number(e.args.from)];
        const to = STATUS_NAMES[Number(e.args.to)];
        if (from === "SUBMITTED" && to === "APPROVED") findings.push(...completionFindings(e, ledgers, stages));
        if (to === "APPROVED" || to === "REJECTED" || to === "CANCELLED") {
          closed = true;
          inReview = false;
        }
        break;
      }
    }
  }
  return findings;
}

/**
 * What a document anchored under review had to undo, against what its transaction did: the approvals it had to
 * invalidate (ReviewInvalidated) and the stage review had to go back to (StageReopened).
 */
function invalidationFindings(
  anchor: ChainEvent,
  later: ChainEvent[],
  ledgers: Map<number, Slot[]>,
  stages: WorkflowStage[],
  current: number,
  name: (departmentId: number) => string,
): string[] {
  const docIndex = Number(anchor.args.docIndex);
  const version = Number(anchor.args.version);
  const added = version === 1;
  // The events the registry emitted for this anchor: the rest of its transaction, up to the next anchor.
  const end = later.findIndex((e) => e.transactionHash !== anchor.transactionHash || e.name === "DocumentAnchored");
  const effects = end < 0 ? later : later.slice(0, end);
  const expected = new Set<string>();
  let reopenTo: number | undefined;
  for (const [stage, slots] of [...ledgers.entries()].sort((a, b) => a[0] - b[0])) {
    slots.forEach((slot, p) => {
      if (slot.status === APPROVED && (added || (slot.mask >> docIndex) & 1)) {
        expected.add(`${stage}:${stages[stage].departmentIds[p]}`);
        if (stage < current && reopenTo === undefined) reopenTo = stage;
      }
    });
  }
  const actual = new Set(
    effects
      .filter((e) => e.name === "ReviewInvalidated" && Number(e.args.docIndex) === docIndex)
      .map((e) => `${Number(e.args.stage)}:${Number(e.args.departmentId)}`),
  );
  const what = `${added ? "document" : `version ${version} of document`} #${docIndex} anchored under review (tx ${anchor.transactionHash})`;
  const describe = (keys: string[]) =>
    keys
      .map((k) => {
        const [stage, departmentId] = k.split(":").map(Number);
        return `${name(departmentId)} in stage ${stageNumber(stage)}`;
      })
      .join(", ");
  const findings: string[] = [];
  const missing = [...expected].filter((k) => !actual.has(k));
  const extra = [...actual].filter((k) => !expected.has(k));
  if (missing.length)
    findings.push(
      `${what} did not invalidate the approval${missing.length > 1 ? "s" : ""} of ${describe(missing)}: ${added ? "a document added under review reopens every approval of every stage reached" : "an approval that reviewed the document must review it again"}`,
    );
  if (extra.length) findings.push(`${what} invalidated ${describe(extra)}, which had no such approval to lose`);
  const reopened = effects.find((e) => e.name === "StageReopened");
  const actualTo = reopened ? Number(reopened.args.toStage) : undefined;
  if (actualTo !== reopenTo)
    findings.push(
      `${what} ${actualTo === undefined ? "reopened no stage" : `reopened stage ${stageNumber(actualTo)}`}, but ${reopenTo === undefined ? "no earlier stage lost an approval" : `review had to go back to stage ${stageNumber(reopenTo)}, the earliest that lost an approval`}`,
    );
  return findings;
}

/** At the issuance, every stage's rule must hold for the positions replayed from events. */
function completionFindings(issuance: ChainEvent, ledgers: Map<number, Slot[]>, stages: WorkflowStage[]): string[] {
  const findings: string[] = [];
  stages.forEach((rule, stage) => {
    const positions = new Map<number, Position>();
    const named: Record<number, Position> = {
      [PENDING]: "PENDING",
      [APPROVED]: "APPROVED",
      [REVIEW_REQUIRED]: "REVIEW_REQUIRED",
    };
    (ledgers.get(stage) ?? []).forEach((slot, p) =>
      positions.set(rule.departmentIds[p], named[slot.status] ?? "OTHER"),
    );
    const unmet = stageRuleUnmet(rule, positions);
    if (unmet)
      findings.push(
        `the licence was issued (tx ${issuance.transactionHash}) although stage ${stageNumber(stage)} was not complete by the decisions replayed from events: ${unmet}`,
      );
  });
  return findings;
}
