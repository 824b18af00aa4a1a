/**
 * ApprovalRegistry: departments, workflows, request progress, stage timeline and department decisions.
 * The only logic here mirrors what the contract does to its own state when it emits the event.
 */
import { and, eq } from "ponder";
import {
  approvals,
  departments,
  departmentWallets,
  requestProgress,
  stageEvents,
  workflows,
  workflowStages,
} from "ponder:schema";
import { ApprovalRegistryAbi } from "../../abis/index.ts";
import {
  bytes32ToString,
  COMPLETION,
  CUSTODY,
  DECISION,
  enumName,
  ESCALATION_CAUSE,
  EXECUTION_TYPE,
  jsonSafe,
  REJECTION_ACTION,
  TIMEOUT_ACTION,
  unpackDepartmentIds,
} from "./decode";
import { type Db, eventId, type LogEvent, recordRole, register } from "./record";

type Progress = typeof requestProgress.$inferInsert;

/** Updates the request's progress row (created by ReviewStarted, which precedes every other review event). */
async function setProgress(db: Db, tokenId: bigint, event: LogEvent, set: Partial<Progress>): Promise<void> {
  if (!(await db.find(requestProgress, { tokenId }))) return;
  await db.update(requestProgress, { tokenId }).set({ ...set, updatedAt: event.block.timestamp });
}

/** One department_wallets row: the wallet a department decides with from this block on. */
async function recordWallet(
  db: Db,
  event: LogEvent,
  departmentId: number,
  wallet: `0x${string}`,
  custody: string,
): Promise<void> {
  await db.insert(departmentWallets).values({
    id: eventId(event),
    departmentId,
    wallet,
    custody,
    fromBlock: event.block.number,
    txHash: event.transaction.hash,
    timestamp: event.block.timestamp,
  });
}

/** One timeline row per stage-related event. */
async function stageEvent(
  db: Db,
  event: LogEvent,
  eventType: string,
  tokenId: bigint,
  stage: number,
  detail: Record<string, unknown> = {},
): Promise<void> {
  await db.insert(stageEvents).values({
    id: eventId(event),
    tokenId,
    stage,
    eventType,
    detail: jsonSafe(detail),
    blockNumber: event.block.number,
    logIndex: event.log.logIndex,
    txHash: event.transaction.hash,
    timestamp: event.block.timestamp,
  });
}

type InvalidationReason =
  | "SUPERSEDED"
  | "DOCUMENT_UPDATED"
  | "STAGE_RETRIED"
  | "ESCALATION_SENT_BACK"
  | "RESUBMITTED"
  | "STAGE_REOPENED";

/** Marks the active decision records of (token, stage[, department][, decision]) inactive. */
async function deactivate(
  db: Db,
  event: LogEvent,
  reason: InvalidationReason,
  where: { tokenId: bigint; stage: number; departmentId?: number; decision?: string },
  document?: { docIndex: number; version: number },
): Promise<void> {
  const conditions = [
    eq(approvals.tokenId, where.tokenId),
    eq(approvals.stage, where.stage),
    eq(approvals.isActive, true),
  ];
  if (where.departmentId !== undefined) conditions.push(eq(approvals.departmentId, where.departmentId));
  if (where.decision !== undefined) conditions.push(eq(approvals.decision, where.decision));
  await db.sql
    .update(approvals)
    .set({
      isActive: false,
      invalidatedAt: event.block.timestamp,
      invalidationReason: reason,
      invalidationTx: event.transaction.hash,
      invalidatedDocIndex: document?.docIndex ?? null,
      invalidatedVersion: document?.version ?? null,
    })
    .where(and(...conditions));
}

register("ApprovalRegistry", ApprovalRegistryAbi, {
  // ------------------------------------------------------------------ departments

  DepartmentRegistered: async ({ event, context }) => {
    const { departmentId, code, wallet } = event.args;
    const custody = enumName(CUSTODY, event.args.custody);
    await context.db.insert(departments).values({
      departmentId,
      code: bytes32ToString(code),
      wallet,
      custody,
      active: true,
      registeredAt: event.block.timestamp,
      updatedAt: event.block.timestamp,
    });
    await recordWallet(context.db, event, departmentId, wallet, custody);
  },

  DepartmentWalletProposed: async ({ event, context }) => {
    const { departmentId, wallet, effectiveAt } = event.args;
    await context.db.update(departments, { departmentId }).set({
      pendingWallet: wallet,
      pendingCustody: enumName(CUSTODY, event.args.custody),
      pendingEffectiveAt: BigInt(effectiveAt),
      updatedAt: event.block.timestamp,
    });
  },

  DepartmentWalletCancelled: async ({ event, context }) => {
    await context.db
      .update(departments, { departmentId: event.args.departmentId })
      .set({ pendingWallet: null, pendingCustody: null, pendingEffectiveAt: null, updatedAt: event.block.timestamp });
  },

  DepartmentActiveSet: async ({ event, context }) => {
    await context.db
      .update(departments, { departmentId: event.args.departmentId })
      .set({ active: event.args.active, updatedAt: event.block.timestamp });
  },

  DepartmentWalletRotated: async ({ event, context }) => {
    const { departmentId, wallet } = event.args;
    const custody = enumName(CUSTODY, event.args.custody);
    await context.db.update(departments, { departmentId }).set({
      wallet,
      custody,
      pendingWallet: null,
      pendingCustody: null,
      pendingEffectiveAt: null,
      updatedAt: event.block.timestamp,
    });
    await recordWallet(context.db, event, departmentId, wallet, custody);
  },

  // ------------------------------------------------------------------ workflows

  // Emitted once per stage, before WorkflowRegistered, in the same transaction.
  WorkflowStageRegistered: async ({ event, context }) => {
    const { workflowId, stageIndex, stage } = event.args;
    await context.db.insert(workflowStages).values({
      id: `${workflowId}-${stageIndex}`,
      workflowId,
      stageIndex,
      executionType: enumName(EXECUTION_TYPE, stage.executionType),
      completion: enumName(COMPLETION, stage.completion),
      threshold: stage.threshold,
      onTimeout: enumName(TIMEOUT_ACTION, stage.onTimeout),
      onRejection: enumName(REJECTION_ACTION, stage.onRejection),
      timeoutSeconds: BigInt(stage.timeoutSeconds),
      mandatoryMask: stage.mandatoryMask,
      departmentIds: unpackDepartmentIds(stage.departmentIds, stage.departmentCount),
    });
  },

  WorkflowRegistered: async ({ event, context }) => {
    const { workflowId, workflowType, version, definitionHash, stageCount, validitySeconds } = event.args;
    await context.db.insert(workflows).values({
      workflowId,
      workflowType: bytes32ToString(workflowType),
      version,
      definitionHash,
      stageCount,
      validitySeconds,
      active: true,
      createdAt: event.block.timestamp,
      deactivatedAt: null,
      txHash: event.transaction.hash,
    });
  },

  WorkflowDeactivated: async ({ event, context }) => {
    await context.db
      .update(workflows, { workflowId: event.args.workflowId })
      .set({ active: false, deactivatedAt: event.block.timestamp });
  },

  // ------------------------------------------------------------------ review progress and timeline

  ReviewStarted: async ({ event, context }) => {
    const { tokenId, workflowId } = event.args;
    const now = event.block.timestamp;
    await context.db
      .insert(requestProgress)
      .values({
        tokenId,
        workflowId,
        stage: 0,
        phase: "IN_REVIEW",
        stageStartedAt: now,
        submittedAt: now,
        escalated: false,
        updatedAt: now,
      })
      // A request is submitted once; should it ever start again, submitted_at keeps the first submission.
      .onConflictDoUpdate({ workflowId, stage: 0, phase: "IN_REVIEW", stageStartedAt: now, escalated: false, updatedAt: now });
    await stageEvent(context.db, event, "ReviewStarted", tokenId, 0, { workflowId });
  },

  // Does not change the phase: a reopening while awaiting resubmission restarts the clock but keeps waiting.
  StageStarted: async ({ event, context }) => {
    const { tokenId, stage, startedAt } = event.args;
    await setProgress(context.db, tokenId, event, { stage, stageStartedAt: BigInt(startedAt) });
    await stageEvent(context.db, event, "StageStarted", tokenId, stage, { startedAt });
  },

  StageCompleted: async ({ event, context }) => {
    await stageEvent(context.db, event, "StageCompleted", event.args.tokenId, event.args.stage);
  },

  StageReopened: async ({ event, context }) => {
    const { tokenId, fromStage, toStage } = event.args;
    // The stage being left keeps its approvals; its requests for changes go back to pending.
    await deactivate(context.db, event, "STAGE_REOPENED", { tokenId, stage: fromStage, decision: "CHANGES_REQUESTED" });
    await setProgress(context.db, tokenId, event, { stage: toStage });
    await stageEvent(context.db, event, "StageReopened", tokenId, toStage, { fromStage, toStage });
  },

  StageRetried: async ({ event, context }) => {
    const { tokenId, stage } = event.args;
    await deactivate(context.db, event, "STAGE_RETRIED", { tokenId, stage });
    await setProgress(context.db, tokenId, event, { phase: "AWAITING_RESUBMISSION" });
    await stageEvent(context.db, event, "StageRetried", tokenId, stage);
  },

  StageEscalated: async ({ event, context }) => {
    const { tokenId, stage, cause, departmentId } = event.args;
    await setProgress(context.db, tokenId, event, { phase: "ESCALATED", escalated: true });
    await stageEvent(context.db, event, "StageEscalated", tokenId, stage, {
      cause: enumName(ESCALATION_CAUSE, cause),
      departmentId,
    });
  },

  EscalationResolved: async ({ event, context }) => {
    const { tokenId, stage, rejected, reasonCode } = event.args;
    if (rejected) {
      // The licence's status change to REJECTED (same transaction) closes the review.
      await setProgress(context.db, tokenId, event, { escalated: false });
    } else {
      await deactivate(context.db, event, "ESCALATION_SENT_BACK", { tokenId, stage, decision: "REJECTED" });
      await setProgress(context.db, tokenId, event, { phase: "IN_REVIEW", escalated: false });
    }
    await stageEvent(context.db, event, "EscalationResolved", tokenId, stage, { rejected, reasonCode });
  },

  StageTimedOut: async ({ event, context }) => {
    const { tokenId, stage, action } = event.args;
    await stageEvent(context.db, event, "StageTimedOut", tokenId, stage, { action: enumName(TIMEOUT_ACTION, action) });
  },

  Resubmitted: async ({ event, context }) => {
    const { tokenId, stage } = event.args;
    await deactivate(context.db, event, "RESUBMITTED", { tokenId, stage, decision: "CHANGES_REQUESTED" });
    await setProgress(context.db, tokenId, event, { phase: "IN_REVIEW" });
    await stageEvent(context.db, event, "Resubmitted", tokenId, stage);
  },

  // ------------------------------------------------------------------ decisions

  DecisionRecorded: async ({ event, context }) => {
    const { tokenId, departmentId, stage, reasonCode, reviewedMask, documentVersions, remarksHash, signer } = event.args;
    const decision = enumName(DECISION, event.args.decision);
    await deactivate(context.db, event, "SUPERSEDED", { tokenId, stage, departmentId });
    await context.db.insert(approvals).values({
      id: eventId(event),
      tokenId,
      departmentId,
      stage,
      decision,
      reasonCode,
      reviewedMask,
      documentVersions: documentVersions.toString(),
      remarksHash,
      signer,
      custody: enumName(CUSTODY, event.args.custody),
      isActive: true,
      blockNumber: event.block.number,
      logIndex: event.log.logIndex,
      txHash: event.transaction.hash,
      timestamp: event.block.timestamp,
    });
    await stageEvent(context.db, event, "DecisionRecorded", tokenId, stage, {
      departmentId,
      decision,
      reasonCode,
      reviewedMask,
    });
  },

  ReviewInvalidated: async ({ event, context }) => {
    const { tokenId, departmentId, stage, docIndex, newVersion } = event.args;
    await deactivate(
      context.db,
      event,
      "DOCUMENT_UPDATED",
      { tokenId, stage, departmentId, decision: "APPROVED" },
      { docIndex, version: newVersion },
    );
    await stageEvent(context.db, event, "ReviewInvalidated", tokenId, stage, { departmentId, docIndex, newVersion });
  },

  RoleGranted: ({ event, context }) => recordRole(context.db, "ApprovalRegistry", true, event),
  RoleRevoked: ({ event, context }) => recordRole(context.db, "ApprovalRegistry", false, event),
});
