/**
 * Issuance on synthetic histories: who changed each status, the stages complete at issuance (net of reopenings,
 * invalidations and retries), and the versions the standing approvals covered against the latest at issuance.
 */
import { expect } from "chai";
import { stageNumber } from "../../abis/index.ts";
import type { DecisionAudit, DocumentAudit } from "../../scripts/audit/auditRecord.ts";
import { auditIssuance, type StageRule } from "../../scripts/audit/issuanceAudit.ts";
import { inChainOrder, type TimedEvent } from "../../scripts/audit/logReader.ts";
import { CONTRACTS, address, event } from "./syntheticChain.ts";

const REGISTRY = CONTRACTS.ApprovalRegistry;
const [SUBMITTED, APPROVED, SUSPENDED, REVOKED] = [2n, 4n, 7n, 8n];
const admin = address();
/** Stage index 0 (stage 1): department 1; index 1 (stage 2): department 2; each ALL (every department mandatory). */
const STAGES: StageRule[] = [
  { completion: 0, threshold: 0, mandatoryMask: 1, departmentIds: [1] },
  { completion: 0, threshold: 0, mandatoryMask: 1, departmentIds: [2] },
];
const roles = {
  holdsAt: (contract: string, role: string, account: string) =>
    contract === "LicenceToken" && role === "ADMIN_ROLE" && account === admin,
};
const documents: DocumentAudit[] = [
  { documentId: "d0", docIndex: 0, docType: "SITE_PLAN", latestVersion: 2, versions: [] },
  { documentId: "d1", docIndex: 1, docType: "FIRE_SAFETY", latestVersion: 1, versions: [] },
];

const on = { token: { address: CONTRACTS.LicenceToken }, documents: { address: CONTRACTS.DocumentRegistry } };
const anchored = (block: number, docIndex: number, version: number) =>
  event(
    "DocumentAnchored",
    block,
    0,
    { tokenId: 7n, docIndex: BigInt(docIndex), version: BigInt(version) },
    on.documents,
  );
const status = (block: number, from: bigint, to: bigint, actor = REGISTRY, logIndex = 5, transactionHash?: string) =>
  event(
    "LicenceStatusChanged",
    block,
    logIndex,
    { tokenId: 7n, from, to, reasonCode: 0n, actor },
    { ...on.token, transactionHash },
  );
const stageStarted = (block: number, stage: number) =>
  event("StageStarted", block, 3, { tokenId: 7n, stage: BigInt(stage) });
const completed = (block: number, stage: number) =>
  event("StageCompleted", block, 4, { tokenId: 7n, stage: BigInt(stage) });
/** A standing approval in the stage of index `stage` by department `departmentId`, covering docIndex -> version. */
function approval(
  block: number,
  stage: number,
  departmentId: number,
  reviewed: [number, number][],
): [TimedEvent, DecisionAudit] {
  const [department, index] = [BigInt(departmentId), BigInt(stage)];
  const e = event("DecisionRecorded", block, 1, { tokenId: 7n, departmentId: department, stage: index, decision: 1n });
  const audit = {
    stage: stageNumber(stage),
    departmentId,
    departmentCode: `D${departmentId}`,
    decision: "APPROVED",
    reasonCode: 0,
    reviewed: reviewed.map(([docIndex, version]) => ({ docIndex, version })),
    transactionHash: e.transactionHash,
    blockNumber: block,
    timestamp: "",
    fate: "STANDING",
  } as unknown as DecisionAudit;
  return [e, audit];
}
/** The issuance: the last StageCompleted, the status change and LicenceIssued in one transaction. */
function issued(block: number, finalStage: number, actor = REGISTRY): TimedEvent[] {
  const change = status(block, SUBMITTED, APPROVED, actor);
  return [
    completed(block, finalStage),
    change,
    event("LicenceIssued", block, 6, { tokenId: 7n }, { ...on.token, transactionHash: change.transactionHash }),
  ];
}

/** auditIssuance on `events` (put in chain order) under `stages`: its answer and its findings. */
function audit(events: TimedEvent[], decisions: DecisionAudit[], stages = STAGES) {
  const findings: string[] = [];
  return {
    check: auditIssuance(inChainOrder(events), decisions, documents, stages, REGISTRY, roles, findings),
    findings,
  };
}

describe("auditor: issuance against stages and versions (synthetic events)", function () {
  /** Two stages: D1 approves the plan v1 + fire v1 in stage 1 (index 0), D2 approves in stage 2, issued. */
  function history(extra: { beforeStage1?: TimedEvent[] } = {}) {
    const [a1, d1] = approval(12, 0, 1, [
      [0, 1],
      [1, 1],
    ]);
    const [a2, d2] = approval(22, 1, 2, [[0, 1]]);
    const events = inChainOrder([
      anchored(2, 0, 1),
      anchored(3, 1, 1),
      status(10, 1n, SUBMITTED),
      stageStarted(10, 0),
      a1,
      completed(12, 0),
      stageStarted(12, 1),
      ...(extra.beforeStage1 ?? []),
      a2,
      ...issued(22, 1),
    ]);
    return { events, decisions: [d1, d2] };
  }

  it("reports the stages complete and each standing approval's coverage; no finding for a sound issuance", function () {
    const { events, decisions } = history();
    const { check, findings } = audit(events, decisions);
    expect(findings).to.deep.equal([]);
    expect(check).to.deep.equal({
      stagesCompleted: [1, 2],
      issuedBy: REGISTRY,
      approvals: [
        {
          stage: 1,
          departmentCode: "D1",
          transactionHash: decisions[0].transactionHash,
          covered: [
            { docIndex: 0, docType: "SITE_PLAN", version: 1, latestAtIssuance: 1 },
            { docIndex: 1, docType: "FIRE_SAFETY", version: 1, latestAtIssuance: 1 },
          ],
        },
        {
          stage: 2,
          departmentCode: "D2",
          transactionHash: decisions[1].transactionHash,
          covered: [{ docIndex: 0, docType: "SITE_PLAN", version: 1, latestAtIssuance: 1 }],
        },
      ],
    });
  });

  it("flags an approval that covered an older version than the latest at issuance (it should have been invalidated)", function () {
    const { events, decisions } = history({ beforeStage1: [anchored(15, 1, 2)] });
    const { check, findings } = audit(events, decisions);
    expect(findings).to.deep.equal([
      `the approval of D1 in stage 1 (tx ${decisions[0].transactionHash}) covered FIRE_SAFETY v1, but v2 was the latest when the licence was issued: it should have been invalidated`,
    ]);
    expect(check!.approvals[0].covered[1]).to.deep.include({ version: 1, latestAtIssuance: 2 });
  });

  it("accepts an approval that a new version invalidated and that was given again on the new version", function () {
    const [again, d1b] = approval(17, 0, 1, [
      [0, 1],
      [1, 2],
    ]);
    const invalidated = event("ReviewInvalidated", 15, 1, {
      tokenId: 7n,
      departmentId: 1n,
      stage: 0n,
      docIndex: 1n,
      newVersion: 2n,
    });
    const reopened = event("StageReopened", 15, 2, { tokenId: 7n, fromStage: 1n, toStage: 0n });
    const { events, decisions } = history({
      beforeStage1: [
        anchored(15, 1, 2),
        invalidated,
        reopened,
        stageStarted(15, 0),
        again,
        completed(17, 0),
        stageStarted(17, 1),
      ],
    });
    const { check, findings } = audit(events, [decisions[0], d1b, decisions[1]]);
    expect(findings).to.deep.equal([]);
    expect(check!.approvals.map((a) => a.transactionHash)).to.deep.equal([
      d1b.transactionHash,
      decisions[1].transactionHash,
    ]);
  });

  it("flags an issuance with a stage not complete: never completed, or reopened and not completed again", function () {
    const { events, decisions } = history();
    const { findings } = audit(
      events.filter((e) => !(e.name === "StageCompleted" && e.blockNumber === 12)),
      decisions,
    );
    expect(findings).to.deep.equal([
      `the licence was issued (tx ${events.find((e) => e.name === "LicenceIssued")!.transactionHash}) with stage 1 of 2 not complete`,
    ]);

    const reopened = history({
      beforeStage1: [event("StageReopened", 15, 2, { tokenId: 7n, fromStage: 1n, toStage: 0n })],
    });
    const { findings: again } = audit(reopened.events, reopened.decisions);
    expect(again).to.have.length(1);
    expect(again[0]).to.include("with stage 1 of 2 not complete");
  });

  it("recomputes each StageCompleted from the decisions standing then and the stage's rule", function () {
    const { events, decisions } = history();
    const rules = (completion: number, threshold: number, mandatoryMask: number, departmentIds: number[]) => [
      { completion, threshold, mandatoryMask, departmentIds },
      STAGES[1],
    ];
    const completion = events.find((e) => e.name === "StageCompleted" && e.blockNumber === 12)!;
    // ALL over departments 1 and 3: only 1 approved.
    const { findings: all } = audit(events, decisions, rules(0, 0, 3, [1, 3]));
    expect(all).to.deep.equal([
      `StageCompleted for stage 1 (block 12, tx ${completion.transactionHash}) does not follow from the decisions standing then: mandatory department 3 had not approved`,
    ]);
    // THRESHOLD 2 of departments 1, 3, 4, none mandatory: one approval.
    const { findings: threshold } = audit(events, decisions, rules(2, 2, 0, [1, 3, 4]));
    expect(threshold[0]).to.include("1 approval of 2 needed");
    // ANY of departments 1 and 3: department 3's approval was invalidated and not given again, so it blocks.
    const [a3] = approval(11, 0, 3, [[0, 1]]);
    const invalidated = event("ReviewInvalidated", 11, 2, {
      tokenId: 7n,
      departmentId: 3n,
      stage: 0n,
      docIndex: 0n,
      newVersion: 2n,
    });
    const { findings: any } = audit([...events, a3, invalidated], decisions, rules(1, 0, 0, [1, 3]));
    expect(any.some((f) => f.includes("department 3 had to review again"))).to.equal(true);
    // ANY of departments 1 and 3 with 1's approval: complete.
    const { findings: ok } = audit(events, decisions, rules(1, 0, 0, [1, 3]));
    expect(ok).to.deep.equal([]);
  });

  it("flags every approval standing at issuance that predates a document added under review, in whatever stage", function () {
    const { events, decisions } = history();
    // A third document added in stage 2 after D2's approval (same block, before the issuance): the registry's rule
    // invalidates the approvals of every stage reached, so neither D1's (stage 1) nor D2's can stand at issuance.
    const added = { ...anchored(22, 2, 1), logIndex: 2 };
    const { findings } = audit([...events, added], decisions);
    expect(findings).to.have.length(2);
    expect(findings[0])
      .to.include("the approval of D1 in stage 1")
      .and.include("document #2 was added under review afterwards");
    expect(findings[1]).to.include("the approval of D2 in stage 2");
  });

  it("flags a review status change not made by the approval registry, and an admin transition by a non-admin", function () {
    const intruder = address();
    const { events, decisions } = history();
    const tampered = events.map((e) =>
      e.name === "LicenceStatusChanged" && e.args.to === APPROVED
        ? status(e.blockNumber, SUBMITTED, APPROVED, intruder, e.logIndex, e.transactionHash)
        : e,
    );
    const after = [status(30, APPROVED, SUSPENDED, admin), status(31, SUSPENDED, REVOKED, intruder)];
    const { check, findings } = audit([...tampered, ...after], decisions);
    expect(check!.issuedBy).to.equal(intruder);
    expect(findings).to.have.length(2);
    expect(findings[0])
      .to.include(`SUBMITTED -> APPROVED at block 22`)
      .and.include(`was made by ${intruder}, not by the approval registry`);
    expect(findings[1])
      .to.include(`SUSPENDED -> REVOKED at block 31`)
      .and.include(`was made by ${intruder}, which did not hold ADMIN_ROLE on the token then`);
  });

  it("has nothing to check for a licence never issued", function () {
    const { check, findings } = audit([status(10, 1n, SUBMITTED)], []);
    expect(check).to.equal(null);
    expect(findings).to.deep.equal([]);
  });
});
