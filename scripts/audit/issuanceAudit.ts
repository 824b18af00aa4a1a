/**
 * Who moved a licence's status, and whether an issued licence had earned it: every stage complete at issuance (each
 * StageCompleted recomputed from the decisions standing then, not taken on trust), and the approvals standing then
 * covering the latest version of every document, including one added under review after them.
 */
import { getAddress } from "ethers";
import { stageNumber } from "../../abis/index.ts";
import { STATUS_NAMES, type DecisionAudit, type DocumentAudit, type IssuanceCheck } from "./auditRecord.ts";
import { isBefore, type ChainEvent } from "./logReader.ts";
import type { RoleHistory } from "./roleHistory.ts";

/** A stage's completion rule, from `stage(workflowId, index)`; completion 0 is All, 1 Any, 2 Threshold. */
export type StageRule = { completion: number; threshold: number; mandatoryMask: number; departmentIds: number[] };

/** The status changes a token ADMIN_ROLE holder makes; the approval registry makes every other. */
const ADMIN_TRANSITIONS = new Set([
  "APPROVED>SUSPENDED",
  "SUSPENDED>APPROVED",
  "APPROVED>REVOKED",
  "SUSPENDED>REVOKED",
]);

export function auditIssuance(
  events: ChainEvent[],
  decisions: DecisionAudit[],
  documents: DocumentAudit[],
  stages: StageRule[],
  approvalRegistry: string,
  roles: Pick<RoleHistory, "holdsAt">,
  findings: string[],
): IssuanceCheck | null {
  const changes = events.filter((e) => e.name === "LicenceStatusChanged");
  findings.push(...statusActorFindings(changes, approvalRegistry, roles));
  const issuances = changes.filter(
    (e) => STATUS_NAMES[Number(e.args.from)] === "SUBMITTED" && STATUS_NAMES[Number(e.args.to)] === "APPROVED",
  );
  if (issuances.length > 1) findings.push(`the licence was issued ${issuances.length} times`);
  const issuance = issuances[0];
  if (!issuance) return null;
  if (!events.some((e) => e.name === "LicenceIssued" && e.transactionHash === issuance.transactionHash)) {
    findings.push(`the issuance (tx ${issuance.transactionHash}) has no LicenceIssued event in its transaction`);
  }
  const completed = stagesCompletedAt(events, issuance);
  findings.push(...stageCompletionFindings(events, stages, completed, issuance));
  const approvals = approvalsAtIssuance(events, decisions, documents, issuance, findings);
  return {
    stagesCompleted: [...completed].sort((a, b) => a - b).map(stageNumber),
    issuedBy: getAddress(issuance.args.actor),
    approvals,
  };
}

/** Review status changes come from the approval registry; suspensions and revocations from a token ADMIN_ROLE. */
function statusActorFindings(
  changes: ChainEvent[],
  approvalRegistry: string,
  roles: Pick<RoleHistory, "holdsAt">,
): string[] {
  const findings: string[] = [];
  for (const change of changes) {
    const transition = `${STATUS_NAMES[Number(change.args.from)]}>${STATUS_NAMES[Number(change.args.to)]}`;
    const actor = getAddress(change.args.actor);
    const at = `${transition.replace(">", " -> ")} at block ${change.blockNumber} (tx ${change.transactionHash})`;
    if (ADMIN_TRANSITIONS.has(transition)) {
      if (!roles.holdsAt("LicenceToken", "ADMIN_ROLE", actor, change))
        findings.push(`${at} was made by ${actor}, which did not hold ADMIN_ROLE on the token then`);
    } else if (actor !== approvalRegistry) {
      findings.push(
        `${at} was made by ${actor}, not by the approval registry ${approvalRegistry}: a review status changes only through the departments' decisions`,
      );
    }
  }
  return findings;
}

/**
 * Stages complete at issuance: StageCompleted adds a stage; a reopening to stage s undoes s and every later one (the
 * registry completes each again on the way back); an invalidation or a retry undoes its own stage.
 */
function stagesCompletedAt(events: ChainEvent[], issuance: ChainEvent): Set<number> {
  const completed = new Set<number>();
  for (const e of events.filter((x) => isBefore(x, issuance))) {
    const stage = Number(e.args.stage);
    if (e.name === "StageCompleted") {
      completed.add(stage);
    } else if (e.name === "StageReopened") {
      for (const s of [...completed]) if (s >= Number(e.args.toStage)) completed.delete(s);
    } else if (e.name === "ReviewInvalidated" || e.name === "StageRetried") {
      completed.delete(stage);
    }
  }
  return completed;
}

/** Every stage complete at issuance, and each StageCompleted recomputed from the decisions standing then. */
function stageCompletionFindings(
  events: ChainEvent[],
  stages: StageRule[],
  completed: Set<number>,
  issuance: ChainEvent,
): string[] {
  const findings: string[] = [];
  const stageCount = stages.length;
  const missing = Array.from({ length: stageCount }, (_, s) => s).filter((s) => !completed.has(s));
  if (missing.length)
    findings.push(
      `the licence was issued (tx ${issuance.transactionHash}) with stage${missing.length > 1 ? "s" : ""} ${missing.map(stageNumber).join(", ")} of ${stageCount} not complete`,
    );
  for (const e of events.filter((x) => x.name === "StageCompleted" && isBefore(x, issuance))) {
    const stage = Number(e.args.stage);
    const unmet = stageRuleUnmet(stages[stage], positionsAt(events, stage, e));
    if (unmet)
      findings.push(
        `StageCompleted for stage ${stageNumber(stage)} (block ${e.blockNumber}, tx ${e.transactionHash}) does not follow from the decisions standing then: ${unmet}`,
      );
  }
  return findings;
}

/**
 * The approvals standing at issuance: each department's last decision in each stage, if an approval that no
 * invalidation or retry undid before the issuance; each must cover the documents' latest versions then, and every
 * document added under review in its stage after it.
 */
function approvalsAtIssuance(
  events: ChainEvent[],
  decisions: DecisionAudit[],
  documents: DocumentAudit[],
  issuance: ChainEvent,
  findings: string[],
): IssuanceCheck["approvals"] {
  const before = (e: ChainEvent) => isBefore(e, issuance);
  // The documents' latest versions at issuance, and when each document was added.
  const anchored = events.filter((e) => e.name === "DocumentAnchored" && before(e));
  const latest = new Map<number, number>();
  for (const e of anchored)
    latest.set(Number(e.args.docIndex), Math.max(latest.get(Number(e.args.docIndex)) ?? 0, Number(e.args.version)));
  const docType = (docIndex: number) =>
    documents.find((d) => d.docIndex === docIndex)?.docType || `document #${docIndex}`;
  // The stage (its number, as the decisions carry it) under review when `e` happened.
  const stageAt = (e: ChainEvent) => {
    const started = events.filter((s) => s.name === "StageStarted" && isBefore(s, e)).at(-1);
    return started ? stageNumber(started.args.stage) : undefined;
  };
  const position = (d: DecisionAudit) => ({ blockNumber: d.blockNumber, logIndex: logIndexOf(events, d) });

  const approvals: IssuanceCheck["approvals"] = [];
  const lastDecisions = new Map<string, DecisionAudit>();
  for (const d of decisions) if (isBefore(position(d), issuance)) lastDecisions.set(`${d.stage}:${d.departmentId}`, d);
  for (const d of [...lastDecisions.values()].sort((a, b) => a.stage - b.stage || a.blockNumber - b.blockNumber)) {
    if (d.decision !== "APPROVED") continue;
    const undone = events.some(
      (e) =>
        before(e) &&
        isBefore(position(d), e) &&
        stageNumber(e.args.stage) === d.stage &&
        ((e.name === "ReviewInvalidated" && Number(e.args.departmentId) === d.departmentId) ||
          e.name === "StageRetried"),
    );
    if (undone) continue;
    const covered = d.reviewed.map((r) => ({
      docIndex: r.docIndex,
      docType: docType(r.docIndex),
      version: r.version,
      latestAtIssuance: latest.get(r.docIndex) ?? 0,
    }));
    for (const c of covered) {
      if (c.version < c.latestAtIssuance) {
        findings.push(
          `the approval of ${d.departmentCode} in stage ${d.stage} (tx ${d.transactionHash}) covered ${c.docType} v${c.version}, but v${c.latestAtIssuance} was the latest when the licence was issued: it should have been invalidated`,
        );
      }
    }
    // A document added under review reopens every approval of every stage reached, not only its own stage's.
    for (const added of anchored.filter(
      (e) => Number(e.args.version) === 1 && isBefore(position(d), e) && stageAt(e) !== undefined,
    )) {
      const index = Number(added.args.docIndex);
      if (!d.reviewed.some((r) => r.docIndex === index)) {
        findings.push(
          `the approval of ${d.departmentCode} in stage ${d.stage} (tx ${d.transactionHash}) stood at issuance although ${docType(index)} was added under review afterwards (tx ${added.transactionHash}): it should have been invalidated`,
        );
      }
    }
    approvals.push({ stage: d.stage, departmentCode: d.departmentCode, transactionHash: d.transactionHash, covered });
  }
  return approvals;
}

export type Position = "PENDING" | "APPROVED" | "OTHER" | "REVIEW_REQUIRED";

/** Each department's standing in `stage` just before `at`: its last decision, unless invalidated or retried since. */
function positionsAt(events: ChainEvent[], stage: number, at: ChainEvent): Map<number, Position> {
  const positions = new Map<number, Position>();
  for (const e of events) {
    if (!isBefore(e, at) || Number(e.args.stage) !== stage) continue;
    if (e.name === "DecisionRecorded")
      positions.set(Number(e.args.departmentId), Number(e.args.decision) === 1 ? "APPROVED" : "OTHER");
    else if (e.name === "ReviewInvalidated") positions.set(Number(e.args.departmentId), "REVIEW_REQUIRED");
    else if (e.name === "StageRetried") positions.clear();
  }
  return positions;
}

/** Why `positions` do not complete the stage under `rule` (the approval registry's `_isComplete`), or undefined. */
export function stageRuleUnmet(rule: StageRule | undefined, positions: Map<number, Position>): string | undefined {
  if (!rule) return "the workflow has no such stage";
  const awaiting = rule.departmentIds.filter((d) => positions.get(d) === "REVIEW_REQUIRED");
  if (awaiting.length) return `department${awaiting.length > 1 ? "s" : ""} ${awaiting.join(", ")} had to review again`;
  const approved = rule.departmentIds.filter((d) => positions.get(d) === "APPROVED");
  const mandatory = rule.departmentIds.filter((_, p) => (rule.mandatoryMask >> p) & 1);
  const missingMandatory = mandatory.filter((d) => !approved.includes(d));
  if (missingMandatory.length)
    return `mandatory department${missingMandatory.length > 1 ? "s" : ""} ${missingMandatory.join(", ")} had not approved`;
  const needed = rule.completion === 0 ? rule.departmentIds.length : rule.completion === 1 ? 1 : rule.threshold;
  if (approved.length < needed)
    return `${approved.length} approval${approved.length === 1 ? "" : "s"} of ${needed} needed`;
  return undefined;
}

/** A decision's log index, from its DecisionRecorded event (one decision per transaction). */
function logIndexOf(events: ChainEvent[], d: DecisionAudit): number {
  return events.find((e) => e.name === "DecisionRecorded" && e.transactionHash === d.transactionHash)?.logIndex ?? 0;
}
