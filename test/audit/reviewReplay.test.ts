/**
 * The review replayed from events alone, by the workflow version's stages as registered: turn order in SEQUENTIAL
 * stages, positions decided twice, decisions outside the current stage, the invalidations a document anchored
 * under review owed (every stage reached for a document added; the reviewers of the document for a new version)
 * with the stage review had to go back to, and every stage's rule at issuance.
 */
import { expect } from "chai";
import { DepartmentWallets } from "../../scripts/audit/departmentWallets.ts";
import type { TimedEvent } from "../../scripts/audit/logReader.ts";
import { replayReview } from "../../scripts/audit/reviewReplay.ts";
import { address, code, event } from "./syntheticChain.ts";

const [SUBMITTED, APPROVED] = [2n, 4n];
/** Stage 0: FIRE (1) then POLICE (2), SEQUENTIAL, ALL; stage 1: WATER (3), ALL. */
const stage = (
  index: number,
  executionType: number,
  ids: number[],
  completion = 0,
  mandatoryMask = (1 << ids.length) - 1,
) =>
  event("WorkflowStageRegistered", 2, index, {
    workflowId: 1n,
    stageIndex: BigInt(index),
    stage: {
      executionType: BigInt(executionType),
      completion: BigInt(completion),
      threshold: 0n,
      mandatoryMask: BigInt(mandatoryMask),
      departmentCount: BigInt(ids.length),
      departmentIds: ids.reduce((w, id, p) => w | (BigInt(id) << BigInt(16 * p)), 0n),
    },
  });
const departments = (stages = [stage(0, 0, [1, 2]), stage(1, 1, [3])]) =>
  new DepartmentWallets(
    [
      ...["FIRE", "POLICE", "WATER"].map((c, i) =>
        event("DepartmentRegistered", 1, i, {
          departmentId: BigInt(i + 1),
          code: code(c),
          wallet: address(),
          custody: 0n,
        }),
      ),
      ...stages,
    ],
    60,
  );

let log = 0;
/** An event of licence 7, in transaction `tx` (a fresh one if not given). */
const of7 = (name: string, block: number, args: Record<string, unknown>, tx?: string) =>
  event(name, block, log++, { tokenId: 7n, ...args }, { transactionHash: tx });
const big = (...values: number[]) => values.map(BigInt);
const decided = (block: number, s: number, departmentId: number, decision = 1n, reviewedMask = 1n, tx?: string) =>
  of7("DecisionRecorded", block, { stage: BigInt(s), departmentId: BigInt(departmentId), decision, reviewedMask }, tx);
const started = (block: number, s: number, tx?: string) =>
  of7("StageStarted", block, { stage: BigInt(s), startedAt: 0n }, tx);
const completed = (block: number, s: number, tx?: string) => of7("StageCompleted", block, { stage: BigInt(s) }, tx);
const anchored = (block: number, docIndex: number, version: number, tx?: string) =>
  of7("DocumentAnchored", block, { docIndex: BigInt(docIndex), version: BigInt(version) }, tx);
const invalidated = (block: number, s: number, departmentId: number, docIndex: number, version: number, tx: string) => {
  const [stageIndex, department, doc, newVersion] = big(s, departmentId, docIndex, version);
  return of7(
    "ReviewInvalidated",
    block,
    { stage: stageIndex, departmentId: department, docIndex: doc, newVersion },
    tx,
  );
};
const reopened = (block: number, from: number, to: number, tx: string) =>
  of7("StageReopened", block, { fromStage: BigInt(from), toStage: BigInt(to) }, tx);
const issued = (block: number, tx?: string) =>
  of7("LicenceStatusChanged", block, { from: SUBMITTED, to: APPROVED }, tx);

/** A sound review: plan anchored, FIRE then POLICE in stage 1, WATER in stage 2, issued. */
function sound(): TimedEvent[] {
  const last = "0x" + "ab".repeat(32);
  const toStage2 = "0x" + "cd".repeat(32);
  return [
    anchored(3, 0, 1),
    of7("ReviewStarted", 4, { workflowId: 1n }),
    started(4, 0),
    decided(5, 0, 1),
    decided(6, 0, 2, 1n, 1n, toStage2),
    completed(6, 0, toStage2),
    started(6, 1, toStage2),
    decided(7, 1, 3, 1n, 1n, last),
    completed(7, 1, last),
    issued(7, last),
  ];
}

describe("auditor: the review replayed from events by the registered rules (synthetic events)", function () {
  it("finds nothing in a sound review", function () {
    expect(replayReview(sound(), departments())).to.deep.equal([]);
  });

  it("flags a decision out of turn in a SEQUENTIAL stage, and a position decided twice", function () {
    const events = sound();
    // POLICE (position 1) decides before FIRE (position 0) approved.
    const swapped = [...events.slice(0, 3), decided(5, 0, 2, 3n), decided(5, 0, 2), ...events.slice(3)];
    const findings = replayReview(swapped, departments());
    expect(
      findings.some(
        (f) =>
          f.includes("the decision of POLICE in stage 1") &&
          f.includes("out of turn in a SEQUENTIAL stage: it was FIRE's turn"),
      ),
    ).to.equal(true);
    expect(findings.some((f) => f.includes("POLICE had already decided there"))).to.equal(true);
  });

  it("flags an issuance although a stage was not complete by the replayed decisions, even with StageCompleted events", function () {
    // Stage 2 is ALL over WATER and FIRE as registered; only WATER approved, yet the chain says completed and issued.
    const rules = departments([stage(0, 0, [1, 2]), stage(1, 1, [3, 1])]);
    const findings = replayReview(sound(), rules);
    expect(findings).to.have.length(1);
    expect(findings[0])
      .to.include("although stage 2 was not complete by the decisions replayed from events")
      .and.include("mandatory department 1 had not approved");
  });

  it("flags a document added under review that reopened only the current stage (stage 1's approvals had to go too)", function () {
    const events = sound();
    const tx = "0x" + "ee".repeat(32);
    // In stage 2, before WATER decides: a new document, invalidating nothing in stage 1 and reopening nothing.
    const partial = [...events.slice(0, 7), anchored(6, 1, 1, tx), ...events.slice(7)];
    const findings = replayReview(partial, departments());
    expect(
      findings.some(
        (f) =>
          f.includes("document #1 anchored under review") &&
          f.includes("did not invalidate the approvals of FIRE in stage 1, POLICE in stage 1"),
      ),
    ).to.equal(true);
    expect(findings.some((f) => f.includes("reopened no stage, but review had to go back to stage 1"))).to.equal(true);
  });

  it("accepts a document added under review that invalidated every approval reached and reopened the earliest stage", function () {
    const events = sound();
    const tx = "0x" + "ef".repeat(32);
    const again = "0x" + "fa".repeat(32);
    const redo = [
      ...events.slice(0, 7),
      anchored(6, 1, 1, tx),
      invalidated(6, 0, 1, 1, 1, tx),
      invalidated(6, 0, 2, 1, 1, tx),
      reopened(6, 1, 0, tx),
      started(6, 0, tx),
      decided(8, 0, 1, 1n, 3n),
      decided(9, 0, 2, 1n, 3n, again),
      completed(9, 0, again),
      started(9, 1, again),
      ...events.slice(7).map((e) => ({ ...e, blockNumber: e.blockNumber + 10 })),
    ];
    expect(replayReview(redo, departments())).to.deep.equal([]);
  });

  it("flags a new version that did not invalidate an approval that reviewed it", function () {
    const events = sound();
    const tx = "0x" + "ad".repeat(32);
    const findings = replayReview([...events.slice(0, 7), anchored(6, 0, 2, tx), ...events.slice(7)], departments());
    expect(findings[0])
      .to.include("version 2 of document #0 anchored under review")
      .and.include("did not invalidate the approvals of FIRE in stage 1, POLICE in stage 1");
  });

  it("flags a decision in a stage other than the current one, and a department not of the stage", function () {
    const events = sound();
    const findings = replayReview(
      [...events.slice(0, 4), decided(5, 1, 3), decided(5, 0, 3), ...events.slice(4)],
      departments(),
    );
    expect(
      findings.some(
        (f) => f.includes("the decision of WATER in stage 2") && f.includes("while the review was in stage 1"),
      ),
    ).to.equal(true);
    expect(findings.some((f) => f.includes("WATER is not a department of that stage"))).to.equal(true);
  });
});
