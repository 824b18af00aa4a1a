/**
 * ApprovalRegistry: departments, workflows, request progress, stage timeline and department decisions.
 * Handlers only write rows: what a change did (the new phase, which decisions were cleared, who can decide now)
 * is said by the contract's events or read from the contract, never worked out here.
 */
import { and, eq, inArray } from "ponder";
import {
  approvals,
  departments,
  departmentWallets,
  requestProgress,
  stageEvents,
  workflows,
  workflowStages,
} from "ponder:schema";
import { refreshPending } from "./pendingDepartments";
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
  RESET_CAUSE,
  REVIEW_PHASE,
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

/** The department ids at the positions of `positionsMask` in the request's stage `stage` (as registered). */
async function departmentsAt(db: Db, tokenId: bigint, stage: number, positionsMask: number): Promise<number[]> {
  const progress = await db.find(requestProgress, { tokenId });
  if (!progress) return [];
  const definition = await db.find(workflowStages, { id: `${progress.workflowId}-${stage}` });
  const ids = (definition?.departmentIds ?? []) as number[];
  return ids.filter((_, position) => (positionsMask >> position) & 1);
}

/** The standing decision rows of (token, stage, departments) stop standing, for `reason`, from this event on. */
async function closeDecisions(
  db: Db,
  event: LogEvent,
  where: { tokenId: bigint; stage: number; departmentIds: number[] },
  set: { invalidationReason: string; status?: string; invalidatedDocIndex?: number; invalidatedVersion?: number },
): Promise<void> {
  if (where.departmentIds.length === 0) return;
  await db.sql
    .update(approvals)
    .set({ isActive: false, invalidatedAt: event.block.timestamp, invalidationTx: event.transaction.hash, ...set })
    .where(
      and(
        eq(approvals.tokenId, where.tokenId),
        eq(approvals.stage, where.stage),
        inArray(approvals.departmentId, where.departmentIds),
        eq(approvals.isActive, true),
      ),
    );
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
      pendingConsented: false,
      updatedAt: event.block.timestamp,
    });
  },

  DepartmentWalletConsented: async ({ event, context }) => {
    await context.db
      .update(departments, { departmentId: event.args.departmentId })
      .set({ pendingConsented: true, updatedAt: event.block.timestamp });
  },

  DepartmentWalletCancelled: async ({ event, context }) => {
    await context.db.update(departments, { departmentId: event.args.departmentId }).set({
      pendingWallet: null,
      pendingCustody: null,
      pendingEffectiveAt: null,
      pendingConsented: null,
      updatedAt: event.block.timestamp,
    });
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
      pendingConsented: null,
      updatedAt: event.block.timestamp,
    });
    await recordWallet(context.db, event, departmentId, wallet, custody);
  },

  // DecisionNonceIncreased: kept as its contract_events row (every event is); the nonce itself is read from the
  // chain when a decision is made (departmentRecord), so no table follows it.

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
        pendingDepartmentIds: [],
        pendingStage: 0,
        updatedAt: now,
      })
      // A request is submitted once; should it ever start again, submitted_at keeps the first submission.
      .onConflictDoUpdate({
        workflowId,
        stage: 0,
        phase: "IN_REVIEW",
        stageStartedAt: now,
        escalated: false,
        updatedAt: now,
      });
    await stageEvent(context.db, event, "ReviewStarted", tokenId, 0, { workflowId });
  },

  ReviewPhaseChanged: async ({ event, context }) => {
    const { tokenId } = event.args;
    await setProgress(context.db, tokenId, event, { phase: enumName(REVIEW_PHASE, event.args.phase) });
    await refreshPending(context, event, tokenId);
  },

  DecisionsReset: async ({ event, context }) => {
    const { tokenId, stage, positionsMask, cause } = event.args;
    const departmentIds = await departmentsAt(context.db, tokenId, stage, positionsMask);
    await closeDecisions(
      context.db,
      event,
      { tokenId, stage, departmentIds },
      { invalidationReason: enumName(RESET_CAUSE, cause) },
    );
    await refreshPending(context, event, tokenId);
  },

  StageStarted: async ({ event, context }) => {
    const { tokenId, stage, startedAt } = event.args;
    await setProgress(context.db, tokenId, event, { stage, stageStartedAt: BigInt(startedAt) });
    await stageEvent(context.db, event, "StageStarted", tokenId, stage, { startedAt });
    await refreshPending(context, event, tokenId);
  },

  StageCompleted: async ({ event, context }) => {
    await stageEvent(context.db, event, "StageCompleted", event.args.tokenId, event.args.stage);
  },

  StageReopened: async ({ event, context }) => {
    const { tokenId, fromStage, toStage } = event.args;
    await setProgress(context.db, tokenId, event, { stage: toStage });
    await stageEvent(context.db, event, "StageReopened", tokenId, toStage, { fromStage, toStage });
  },

  StageRetried: async ({ event, context }) => {
    const { tokenId, stage } = event.args;
    await stageEvent(context.db, event, "StageRetried", tokenId, stage);
  },

  StageEscalated: async ({ event, context }) => {
    const { tokenId, stage, cause, departmentId } = event.args;
    await setProgress(context.db, tokenId, event, { escalated: true });
    await stageEvent(context.db, event, "StageEscalated", tokenId, stage, {
      cause: enumName(ESCALATION_CAUSE, cause),
      departmentId,
    });
  },

  EscalationResolved: async ({ event, context }) => {
    const { tokenId, stage, rejected, reasonCode } = event.args;
    await setProgress(context.db, tokenId, event, { escalated: false });
    await stageEvent(context.db, event, "EscalationResolved", tokenId, stage, { rejected, reasonCode });
  },

  StageTimedOut: async ({ event, context }) => {
    const { tokenId, stage, action } = event.args;
    await stageEvent(context.db, event, "StageTimedOut", tokenId, stage, { action: enumName(TIMEOUT_ACTION, action) });
  },

  Resubmitted: async ({ event, context }) => {
    const { tokenId, stage } = event.args;
    await stageEvent(context.db, event, "Resubmitted", tokenId, stage);
  },

  // ------------------------------------------------------------------ decisions

  DecisionRecorded: async ({ event, context }) => {
    const { tokenId, departmentId, stage, reasonCode, reviewedMask, documentVersions, remarksHash, signer } =
      event.args;
    const decision = enumName(DECISION, event.args.decision);
    // The contract accepts a decision only from a department with none standing in the stage (Pending, or
    // ReviewRequired after ReviewInvalidated): earlier rows were closed by the event that cleared them.
    await context.db.insert(approvals).values({
      id: eventId(event),
      tokenId,
      departmentId,
      stage,
      decision,
      status: decision,
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
    await refreshPending(context, event, tokenId);
  },

  ReviewInvalidated: async ({ event, context }) => {
    const { tokenId, departmentId, stage, docIndex, newVersion } = event.args;
    await closeDecisions(
      context.db,
      event,
      { tokenId, stage, departmentIds: [departmentId] },
      {
        invalidationReason: "DOCUMENT_UPDATED",
        status: "REVIEW_REQUIRED",
        invalidatedDocIndex: docIndex,
        invalidatedVersion: newVersion,
      },
    );
    await stageEvent(context.db, event, "ReviewInvalidated", tokenId, stage, { departmentId, docIndex, newVersion });
    await refreshPending(context, event, tokenId);
  },

  RoleGranted: ({ event, context }) => recordRole(context.db, "ApprovalRegistry", true, event),
  RoleRevoked: ({ event, context }) => recordRole(context.db, "ApprovalRegistry", false, event),
});
