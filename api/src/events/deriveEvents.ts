/**
 * What a confirmed transaction means for webhooks: its receipt's contract events, read together with the chain's
 * review state at its block, become platform events (docs/decisions.md, "Events"):
 *
 * - APPROVAL_REQUIRED to each department that became able to decide (review started, stage advanced, its turn in
 *   a SEQUENTIAL stage, resubmission, an escalation sent back), except departments whose approval this very
 *   transaction invalidated (they get DOCUMENT_UPDATED);
 * - DOCUMENT_UPDATED to the departments whose approvals a new document version invalidated;
 * - REQUEST_APPROVED, CERTIFICATE_ISSUED, REQUEST_REJECTED, CHANGES_REQUESTED, CERTIFICATE_REVOKED from the
 *   licence's status changes, to every department of the request's workflow;
 * - STAGE_OVERDUE (a NOTIFY timeout) to the departments still pending; ESCALATED to administrators' webhooks.
 *
 * It also keeps the request's stage-timeout job in line with the chain: scheduled for the current stage's
 * deadline, or removed when no timeout is running.
 */
import { decodeBytes32String, type JsonRpcProvider, type Log, type LogDescription } from "ethers";
import type pg from "pg";
import {
  approvalRegistry, bytes16ToUuid, documentRegistry, eventsOf, LICENCE_STATUS, LICENCE_STATUS_NAMES, licenceToken, REVIEW_PHASE, TIMEOUT_ACTION, timeoutPending,
} from "../chain/contracts.ts";
import type { IndexWaiter } from "../chain/chainGateway.ts";
import type { Deployment } from "../chain/deployment.ts";
import { withTransaction } from "../db/transaction.ts";
import { sortedStages } from "../domain/workflows/compileWorkflow.ts";
import type { WorkflowStore } from "../stores/workflowStore.ts";
import { cancelJob, enqueueJob, JOB_NAMES } from "../jobs/jobQueue.ts";
import { departmentCodes } from "../reads/requestReads.ts";
import { stableUuid } from "../reads/stableId.ts";
import type { PlatformEvent } from "../webhooks/payloads.ts";
import { recordEvents } from "./eventOutbox.ts";

export interface DeriveDependencies {
  pool: pg.Pool;
  /** The index, so a receiver that reads the API on a webhook sees the change: events wait for its block. */
  index: IndexWaiter;
  provider: JsonRpcProvider;
  contracts: Deployment["contracts"];
  workflows: WorkflowStore;
}

/** Topics of the events any platform event can follow from: the review's, and licence status changes. */
const EVENTFUL_TOPICS = new Set<string>([licenceToken.getEvent("LicenceStatusChanged")!.topicHash, licenceToken.getEvent("LicenceIssued")!.topicHash]);
approvalRegistry.forEachEvent((event) => EVENTFUL_TOPICS.add(event.topicHash));

/**
 * Whether a receipt can yield platform events at all (a mint, a draft document or a department registration
 * cannot): the others need no derive-events job, which spares every such write a job's round trips.
 */
export function mayDeriveEvents(logs: readonly Log[]): boolean {
  return logs.some((log) => log.topics[0] !== undefined && EVENTFUL_TOPICS.has(log.topics[0]));
}

interface Progress {
  workflowId: bigint;
  stage: bigint;
  phase: bigint;
  flags: bigint;
  stageStartedAt: bigint;
}

/** Derives and records the events of one confirmed transaction. Safe to run again: ids are deterministic. */
export async function deriveEvents(deps: DeriveDependencies, txId: string): Promise<{ events: number; deliveries: number }> {
  const { pool, provider, contracts } = deps;
  const tx = (await pool.query(`SELECT id, tx_hash, request_id, status FROM chain_transactions WHERE id = $1`, [txId])).rows[0];
  // Not confirmed (any more): a reorganisation put it back to PENDING; it is derived again when it confirms.
  if (!tx || tx.status !== "CONFIRMED" || !tx.request_id) return { events: 0, deliveries: 0 };
  const request = (await pool.query(`SELECT id, request_number, request_type, applicant_id, token_id FROM requests WHERE id = $1`, [tx.request_id])).rows[0];
  if (!request) return { events: 0, deliveries: 0 };
  const receipt = await provider.getTransactionReceipt(tx.tx_hash);
  if (!receipt) throw new Error(`receipt of ${tx.tx_hash} not available yet`);
  const tokenId = BigInt(request.token_id);
  const ofToken = (found: LogDescription[]) => found.filter((e) => e.args.tokenId === tokenId);
  const registry = (name: string) => ofToken(eventsOf(receipt.logs, approvalRegistry, contracts.ApprovalRegistry, name));
  const token = (name: string) => ofToken(eventsOf(receipt.logs, licenceToken, contracts.LicenceToken, name));

  const statusChanges = token("LicenceStatusChanged");
  const issued = token("LicenceIssued");
  const invalidated = registry("ReviewInvalidated");
  const timedOut = registry("StageTimedOut");
  const escalated = registry("StageEscalated");
  const touchesReview = receipt.logs.some(
    (log) => log.address.toLowerCase() === contracts.ApprovalRegistry.toLowerCase() && log.topics[1] !== undefined && BigInt(log.topics[1]) === tokenId,
  );
  if (!touchesReview && statusChanges.length === 0 && issued.length === 0) return { events: 0, deliveries: 0 };

  if (!(await deps.index.waitForBlock(receipt.blockNumber, 10_000))) throw new Error(`the index has not reached block ${receipt.blockNumber} yet`);
  const block = await provider.getBlock(receipt.blockNumber);
  const occurredAt = new Date(Number(block!.timestamp) * 1000);
  const view = async (fn: string, args: unknown[], blockTag: number | string) => {
    const data = approvalRegistry.encodeFunctionData(fn, args);
    const raw = await provider.call({ to: contracts.ApprovalRegistry, data, blockTag }).catch(async (error) => {
      // A node without that block's state (anvil restarted from a snapshot, Besu past its retained layers): the
      // latest state is the best answer left.
      if (blockTag === "latest") throw error;
      return provider.call({ to: contracts.ApprovalRegistry, data, blockTag: "latest" });
    });
    return approvalRegistry.decodeFunctionResult(fn, raw);
  };
  const progressAt = async (blockTag: number | string) => (await view("progressOf", [tokenId], blockTag))[0] as unknown as Progress;
  // Departments able to decide at the transaction's block: asked once, shared by the checks below.
  const pendingAt = async (blockTag: number) => [...((await view("pendingDepartmentsOf", [tokenId], blockTag))[0] as bigint[])].map(Number);
  let pending: Promise<number[]> | undefined;
  const pendingAfter = () => (pending ??= pendingAt(receipt.blockNumber));

  const after = await progressAt(receipt.blockNumber);
  const workflow = await deps.workflows.byChainId(Number(after.workflowId));
  const stages = workflow ? sortedStages(workflow.stages) : [];
  const routed = [...new Set(stages.flatMap((s) => s.requiredApprovals.map((a) => a.departmentCode)))];
  const stageInfo = (index: bigint) => ({ index: Number(index), name: stages[Number(index)]?.stageName ?? null });

  const base = {
    requestId: request.id as string,
    requestNumber: request.request_number as string,
    requestType: request.request_type as string,
    applicantId: request.applicant_id as string,
    tokenId: tokenId.toString(),
    transactionHash: receipt.hash,
    occurredAt,
  };
  const events: PlatformEvent[] = [];
  const add = (key: string, type: PlatformEvent["type"], departments: string[], data: Record<string, unknown>) =>
    events.push({ ...base, id: stableUuid(`event:${key}`), type, departments, data });

  // Document updates that invalidated approvals.
  const invalidatedIds = new Set(invalidated.map((e) => Number(e.args.departmentId)));
  const codes = await departmentCodes(pool, [...invalidatedIds, ...escalated.map((e) => Number(e.args.departmentId)).filter((id) => id > 0)]);
  const codeOf = (id: number) => codes.get(id) ?? String(id);
  const anchored = eventsOf(receipt.logs, documentRegistry, contracts.DocumentRegistry, "DocumentAnchored").filter((e) => e.args.tokenId === tokenId);
  for (const doc of anchored) {
    const departments = invalidated.filter((e) => e.args.docIndex === doc.args.docIndex).map((e) => codeOf(Number(e.args.departmentId)));
    if (departments.length === 0) continue;
    const documentId = bytes16ToUuid(doc.args.documentId as string);
    // The type is on chain with the first version only; later versions carry the same document id.
    const docType = (await pool.query(`SELECT doc_type FROM documents WHERE id = $1`, [documentId])).rows[0]?.doc_type ?? decodeBytes32String(doc.args.docType);
    add(`document-updated:${tokenId}:${doc.args.docIndex}:${doc.args.version}`, "DOCUMENT_UPDATED", [...new Set(departments)], {
      document: { documentId, documentType: docType, version: Number(doc.args.version), sha256: doc.args.sha256Hash },
      invalidatedApprovals: [...new Set(departments)],
    });
  }

  // Departments that became able to decide: all the pending ones when the stage (re)started in this transaction;
  // otherwise those the contract lists as pending after the block and not before it (its next turn in a SEQUENTIAL
  // stage: the turn rule stays in the contract). A department whose approval this transaction invalidated gets
  // DOCUMENT_UPDATED instead. Another transaction of the same block yields the same ids, recorded once.
  const started = registry("StageStarted").at(-1);
  const currentStage = started ? BigInt(started.args.stage) : after.stage;
  const decided = registry("DecisionRecorded").length > 0;
  if (after.phase === REVIEW_PHASE.InReview && (started || decided)) {
    const startedAt = started ? BigInt(started.args.startedAt) : after.stageStartedAt;
    const before = started ? [] : await pendingAt(receipt.blockNumber - 1);
    const newly = (await pendingAfter()).filter((id) => !invalidatedIds.has(id) && !before.includes(id));
    const reason = registry("ReviewStarted").length ? "SUBMITTED"
      : registry("Resubmitted").length ? "RESUBMITTED"
      : registry("StageReopened").length ? "STAGE_REOPENED"
      : registry("EscalationResolved").length ? "RETURNED_BY_ADMINISTRATOR"
      : registry("StageCompleted").length ? "STAGE_ADVANCED"
      : "TURN";
    const newCodes = await departmentCodes(pool, newly);
    for (const id of newly) {
      const code = newCodes.get(id) ?? String(id);
      add(`approval-required:${tokenId}:${currentStage}:${startedAt}:${code}`, "APPROVAL_REQUIRED", [code], { reason, stage: stageInfo(currentStage) });
    }
  }

  // Timeouts and escalations.
  for (const timeout of timedOut) {
    if (timeout.args.action !== TIMEOUT_ACTION.Notify) continue;
    const stillPending = await pendingAfter();
    const pendingCodes = await departmentCodes(pool, stillPending);
    for (const id of stillPending) {
      const code = pendingCodes.get(id) ?? String(id);
      add(`overdue:${tokenId}:${timeout.args.stage}:${after.stageStartedAt}:${code}`, "STAGE_OVERDUE", [code], { stage: stageInfo(timeout.args.stage) });
    }
  }
  for (const escalation of escalated) {
    const departmentId = Number(escalation.args.departmentId);
    add(`escalated:${receipt.hash}:${tokenId}:${escalation.args.stage}`, "ESCALATED", [], {
      stage: stageInfo(escalation.args.stage),
      cause: Number(escalation.args.cause) === 1 ? "TIMEOUT" : "REJECTION",
      ...(departmentId > 0 ? { rejectedBy: codeOf(departmentId) } : {}),
    });
  }

  // The licence's status.
  for (const change of statusChanges) {
    const data = { status: LICENCE_STATUS_NAMES[Number(change.args.to)], reasonCode: Number(change.args.reasonCode) };
    const key = (type: string) => `${type}:${receipt.hash}:${tokenId}`;
    if (change.args.to === LICENCE_STATUS.Approved && change.args.from !== LICENCE_STATUS.Suspended) add(key("approved"), "REQUEST_APPROVED", routed, data);
    if (change.args.to === LICENCE_STATUS.Rejected) add(key("rejected"), "REQUEST_REJECTED", routed, data);
    if (change.args.to === LICENCE_STATUS.PendingResubmission) add(key("returned"), "CHANGES_REQUESTED", routed, data);
    if (change.args.to === LICENCE_STATUS.Revoked) add(key("revoked"), "CERTIFICATE_REVOKED", routed, data);
  }
  for (const issue of issued) {
    const expiresAt = Number(issue.args.expiresAt);
    add(`issued:${receipt.hash}:${tokenId}`, "CERTIFICATE_ISSUED", routed, {
      issuedAt: new Date(Number(issue.args.issuedAt) * 1000).toISOString(),
      expiresAt: expiresAt ? new Date(expiresAt * 1000).toISOString() : null,
    });
  }

  // The stage deadline, from the latest state (derivations may run out of order).
  const timeout = touchesReview ? await timeoutOf(deps, tokenId, view) : undefined;

  return withTransaction(pool, async (client) => {
    const deliveries = await recordEvents(client, events, tx.id);
    if (timeout === null) await cancelJob(client, JOB_NAMES.stageTimeout, `token:${tokenId}`);
    else if (timeout) await enqueueJob(client, JOB_NAMES.stageTimeout, `token:${tokenId}`, timeout.data, timeout.runAt);
    return { events: events.length, deliveries };
  });
}

/** The running stage timeout of a request (null: none is running). */
async function timeoutOf(deps: DeriveDependencies, tokenId: bigint, view: (fn: string, args: unknown[], blockTag: number | string) => Promise<any>) {
  const latest = (await view("progressOf", [tokenId], "latest"))[0] as Progress;
  if (!timeoutPending(latest)) return null;
  const [stage] = await view("stage", [latest.workflowId, latest.stage], "latest");
  const seconds = BigInt(stage.timeoutSeconds);
  if (seconds === 0n) return null;
  const deadline = Number(latest.stageStartedAt + seconds);
  return {
    runAt: new Date(deadline * 1000),
    data: { tokenId: tokenId.toString(), stage: Number(latest.stage), startedAt: Number(latest.stageStartedAt), deadline },
  };
}
