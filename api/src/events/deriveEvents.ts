/**
 * What a confirmed transaction means for webhooks: its receipt's contract events, read together with the chain's
 * review state at its block, become platform events (docs/decisions.md, "Events"), one step per kind below. It also
 * keeps the request's stage-timeout job in line with the chain: scheduled for the current stage's deadline, or
 * removed when no timeout is running.
 */
import {
  decodeBytes32String,
  type JsonRpcProvider,
  type Log,
  type LogDescription,
  type TransactionReceipt,
} from "ethers";
import type pg from "pg";
import { stageNumber } from "../../../abis/index.ts";
import {
  approvalRegistry,
  bytes16ToUuid,
  documentRegistry,
  eventsOf,
  LICENCE_STATUS,
  LICENCE_STATUS_NAMES,
  licenceToken,
  TIMEOUT_ACTION,
  timeoutPending,
} from "../chain/contracts.ts";
import type { IndexWaiter } from "../chain/chainGateway.ts";
import {
  atBlockOrLatest,
  type ContractCaller,
  pendingDepartmentsOf,
  progressOf,
  workflowStage,
} from "../chain/contractReads.ts";
import type { Deployment } from "../chain/deployment.ts";
import { withTransaction } from "../db/transaction.ts";
import { sortedStages } from "../domain/workflows/compileWorkflow.ts";
import type { WorkflowStore } from "../stores/workflowStore.ts";
import { cancelJob, enqueueJob, JOB_NAMES } from "../jobs/jobQueue.ts";
import { departmentCodes } from "../reads/requestReads.ts";
import { stableUuid } from "../reads/stableId.ts";
import { dateFromUnixSeconds, isoFromUnixSeconds } from "../encoding/unixTime.ts";
import type { PlatformEvent } from "../webhooks/payloads.ts";
import { ApprovalRegistryPhase } from "../../../abis/index.ts";
import { recordEvents } from "./eventOutbox.ts";

export interface DeriveDependencies {
  pool: pg.Pool;
  /** The index, so a receiver that reads the API on a webhook sees the change: events wait for its block. */
  index: IndexWaiter;
  /** The chain's views, through the gateway (an unreachable node is ChainUnavailableError). */
  gateway: ContractCaller;
  /** Receipts and block times. */
  provider: JsonRpcProvider;
  contracts: Deployment["contracts"];
  workflows: WorkflowStore;
}

/** Topics of the events any platform event can follow from: the review's, and licence status changes. */
const EVENTFUL_TOPICS = new Set<string>([
  licenceToken.getEvent("LicenceStatusChanged")!.topicHash,
  licenceToken.getEvent("LicenceIssued")!.topicHash,
]);
approvalRegistry.forEachEvent((event) => EVENTFUL_TOPICS.add(event.topicHash));

/**
 * Whether a receipt can yield platform events at all (a mint, a draft document or a department registration
 * cannot): the others need no derive-events job, which spares every such write a job's round trips.
 */
export function mayDeriveEvents(logs: readonly Log[]): boolean {
  return logs.some((log) => log.topics[0] !== undefined && EVENTFUL_TOPICS.has(log.topics[0]));
}

/** Derives and records the events of one confirmed transaction. Safe to run again: ids are deterministic. */
export async function deriveEvents(
  deps: DeriveDependencies,
  txId: string,
): Promise<{ events: number; deliveries: number }> {
  const subject = await confirmedRequestTransaction(deps.pool, txId);
  if (!subject) return { events: 0, deliveries: 0 };
  const receipt = await deps.provider.getTransactionReceipt(subject.txHash);
  if (!receipt) throw new Error(`receipt of ${subject.txHash} not available yet`);
  const logs = logsOfToken(receipt, deps.contracts, BigInt(subject.request.token_id));
  const statusLogs = logs.token("LicenceStatusChanged").length + logs.token("LicenceIssued").length;
  if (!logs.touchesReview && statusLogs === 0) return { events: 0, deliveries: 0 };
  if (!(await deps.index.waitForBlock(receipt.blockNumber, 10_000)))
    throw new Error(`the index has not reached block ${receipt.blockNumber} yet`);
  const derivation = await startDerivation(deps, receipt, logs);
  const drafts = [
    ...(await documentUpdatedEvents(derivation)),
    ...(await approvalRequiredEvents(derivation)),
    ...(await overdueEvents(derivation)),
    ...(await escalationEvents(derivation)),
    ...statusEvents(derivation),
    ...issuedEvents(derivation),
  ];
  const block = await deps.provider.getBlock(receipt.blockNumber);
  const occurredAt = dateFromUnixSeconds(block!.timestamp);
  const events = drafts.map((draft) => platformEvent(subject.request, receipt.hash, occurredAt, draft));
  // The stage deadline, from the latest state (derivations may run out of order).
  const timeout = logs.touchesReview ? await timeoutOf(derivation.chain) : undefined;
  return recordDerived(deps.pool, subject.txId, logs.tokenId, events, timeout);
}

interface RequestRow {
  id: string;
  request_number: string;
  request_type: string;
  applicant_id: string;
  token_id: string;
}

/** The transaction and its request; none when it is not confirmed (any more) or belongs to no request. */
async function confirmedRequestTransaction(
  pool: pg.Pool,
  txId: string,
): Promise<{ txId: string; txHash: string; request: RequestRow } | undefined> {
  const tx = (await pool.query(`SELECT id, tx_hash, request_id, status FROM chain_transactions WHERE id = $1`, [txId]))
    .rows[0];
  // Not confirmed (any more): a reorganisation put it back to PENDING; it is derived again when it confirms.
  if (!tx || tx.status !== "CONFIRMED" || !tx.request_id) return undefined;
  const request = (
    await pool.query(`SELECT id, request_number, request_type, applicant_id, token_id FROM requests WHERE id = $1`, [
      tx.request_id,
    ])
  ).rows[0];
  return request ? { txId: tx.id, txHash: tx.tx_hash, request } : undefined;
}

type TokenLogs = ReturnType<typeof logsOfToken>;

/** The receipt's events about the request's token. */
function logsOfToken(receipt: TransactionReceipt, contracts: Deployment["contracts"], tokenId: bigint) {
  const ofToken = (found: LogDescription[]) => found.filter((e) => e.args.tokenId === tokenId);
  return {
    tokenId,
    /** ApprovalRegistry events by name. */
    registry: (name: string) => ofToken(eventsOf(receipt.logs, approvalRegistry, contracts.ApprovalRegistry, name)),
    /** LicenceToken events by name. */
    token: (name: string) => ofToken(eventsOf(receipt.logs, licenceToken, contracts.LicenceToken, name)),
    /** Whether any ApprovalRegistry log of the receipt is about this token. */
    touchesReview: receipt.logs.some(
      (log) =>
        log.address.toLowerCase() === contracts.ApprovalRegistry.toLowerCase() &&
        log.topics[1] !== undefined &&
        BigInt(log.topics[1]) === tokenId,
    ),
    anchored: ofToken(eventsOf(receipt.logs, documentRegistry, contracts.DocumentRegistry, "DocumentAnchored")),
  };
}

type ChainViews = ReturnType<typeof chainViews>;

/** ApprovalRegistry's views of the request's token, at a block (or the latest, where the node lacks the block). */
function chainViews({ gateway, contracts }: DeriveDependencies, tokenId: bigint, blockNumber: number) {
  const caller = atBlockOrLatest(gateway);
  const registry = contracts.ApprovalRegistry;
  const pendingAt = async (blockTag: number) => [...(await pendingDepartmentsOf(caller, registry, tokenId, blockTag))];
  let pending: Promise<number[]> | undefined;
  return {
    tokenId,
    progressAt: (blockTag: number | "latest") => progressOf(caller, registry, tokenId, blockTag),
    pendingAt,
    /** Departments able to decide at the transaction's block: asked once, shared by the steps. */
    pendingAfter: () => (pending ??= pendingAt(blockNumber)),
    /** The timeout of stage `stage` of workflow version `workflowId`, in seconds (0: none). */
    timeoutSecondsOf: async (workflowId: number, stage: number) =>
      (await workflowStage(caller, registry, workflowId, stage, "latest")).timeoutSeconds,
  };
}

type Derivation = Awaited<ReturnType<typeof startDerivation>>;

/** What every step reads: the receipt's logs, the review state after the block and the request's workflow. */
async function startDerivation(deps: DeriveDependencies, receipt: TransactionReceipt, logs: TokenLogs) {
  const chain = chainViews(deps, logs.tokenId, receipt.blockNumber);
  const after = await chain.progressAt(receipt.blockNumber);
  const workflow = await deps.workflows.byChainId(after.workflowId);
  const stages = workflow ? sortedStages(workflow.stages) : [];
  return {
    pool: deps.pool,
    receipt,
    logs,
    chain,
    after,
    /** Every department the request's workflow routes to. */
    routed: [...new Set(stages.flatMap((s) => s.requiredApprovals.map((a) => a.departmentCode)))],
    /** A stage of the pinned workflow as payloads show it: its number (from 1) and name, from the chain's index. */
    stageInfo: (index: number | bigint) => ({
      number: stageNumber(index),
      name: stages[Number(index)]?.stageName ?? null,
    }),
    /** Departments whose approval this transaction invalidated. */
    invalidatedIds: new Set(logs.registry("ReviewInvalidated").map((e) => Number(e.args.departmentId))),
  };
}

/** A platform event before the request's fields are added: its id key, type, recipients and data. */
interface EventDraft {
  key: string;
  type: PlatformEvent["type"];
  departments: string[];
  data: Record<string, unknown>;
}

function platformEvent(
  request: RequestRow,
  transactionHash: string,
  occurredAt: Date,
  draft: EventDraft,
): PlatformEvent {
  return {
    requestId: request.id,
    requestNumber: request.request_number,
    requestType: request.request_type,
    applicantId: request.applicant_id,
    tokenId: BigInt(request.token_id).toString(),
    transactionHash,
    occurredAt,
    id: stableUuid(`event:${draft.key}`),
    type: draft.type,
    departments: draft.departments,
    data: draft.data,
  };
}

/** Department codes by id; an id the index does not know yet stands for itself. */
async function codesOf(pool: pg.Pool, ids: number[]): Promise<(id: number) => string> {
  const codes = await departmentCodes(pool, ids);
  return (id) => codes.get(id) ?? String(id);
}

/** DOCUMENT_UPDATED to the departments whose approvals a new document version invalidated. */
async function documentUpdatedEvents({ pool, logs, invalidatedIds }: Derivation): Promise<EventDraft[]> {
  const invalidated = logs.registry("ReviewInvalidated");
  const codeOf = await codesOf(pool, [...invalidatedIds]);
  const drafts: EventDraft[] = [];
  for (const doc of logs.anchored) {
    const departments = invalidated
      .filter((e) => e.args.docIndex === doc.args.docIndex)
      .map((e) => codeOf(Number(e.args.departmentId)));
    if (departments.length === 0) continue;
    const documentId = bytes16ToUuid(doc.args.documentId as string);
    // The type is on chain with the first version only; later versions carry the same document id.
    const docType =
      (await pool.query(`SELECT doc_type FROM documents WHERE id = $1`, [documentId])).rows[0]?.doc_type ??
      decodeBytes32String(doc.args.docType);
    drafts.push({
      key: `document-updated:${logs.tokenId}:${doc.args.docIndex}:${doc.args.version}`,
      type: "DOCUMENT_UPDATED",
      departments: [...new Set(departments)],
      data: {
        document: { documentId, documentType: docType, version: Number(doc.args.version), sha256: doc.args.sha256Hash },
        invalidatedApprovals: [...new Set(departments)],
      },
    });
  }
  return drafts;
}

/**
 * APPROVAL_REQUIRED to the departments that became able to decide: all the pending ones when the stage (re)started
 * in this transaction; otherwise those the contract lists as pending after the block and not before it (its next
 * turn in a SEQUENTIAL stage: the turn rule stays in the contract). A department whose approval this transaction
 * invalidated gets DOCUMENT_UPDATED instead. Another transaction of the same block yields the same ids, recorded once.
 */
async function approvalRequiredEvents(derivation: Derivation): Promise<EventDraft[]> {
  const { pool, receipt, logs, chain, after, stageInfo, invalidatedIds } = derivation;
  const started = logs.registry("StageStarted").at(-1);
  const decided = logs.registry("DecisionRecorded").length > 0;
  if (after.phase !== ApprovalRegistryPhase.InReview || !(started || decided)) return [];
  const currentStage = started ? Number(started.args.stage) : after.stage;
  const startedAt = started ? Number(started.args.startedAt) : after.stageStartedAt;
  const before = started ? [] : await chain.pendingAt(receipt.blockNumber - 1);
  const newly = (await chain.pendingAfter()).filter((id) => !invalidatedIds.has(id) && !before.includes(id));
  const reason = approvalRequiredReason(logs);
  const codeOf = await codesOf(pool, newly);
  return newly.map((id) => ({
    key: `approval-required:${logs.tokenId}:${currentStage}:${startedAt}:${codeOf(id)}`,
    type: "APPROVAL_REQUIRED",
    departments: [codeOf(id)],
    data: { reason, stage: stageInfo(currentStage) },
  }));
}

function approvalRequiredReason(logs: TokenLogs): string {
  if (logs.registry("ReviewStarted").length) return "SUBMITTED";
  if (logs.registry("Resubmitted").length) return "RESUBMITTED";
  if (logs.registry("StageReopened").length) return "STAGE_REOPENED";
  if (logs.registry("EscalationResolved").length) return "RETURNED_BY_ADMINISTRATOR";
  if (logs.registry("StageCompleted").length) return "STAGE_ADVANCED";
  return "TURN";
}

/** STAGE_OVERDUE (a NOTIFY timeout) to the departments still pending. */
async function overdueEvents({ pool, logs, chain, after, stageInfo }: Derivation): Promise<EventDraft[]> {
  const drafts: EventDraft[] = [];
  for (const timeout of logs.registry("StageTimedOut")) {
    if (timeout.args.action !== TIMEOUT_ACTION.Notify) continue;
    const stillPending = await chain.pendingAfter();
    const codeOf = await codesOf(pool, stillPending);
    for (const id of stillPending) {
      drafts.push({
        key: `overdue:${logs.tokenId}:${timeout.args.stage}:${after.stageStartedAt}:${codeOf(id)}`,
        type: "STAGE_OVERDUE",
        departments: [codeOf(id)],
        data: { stage: stageInfo(timeout.args.stage) },
      });
    }
  }
  return drafts;
}

/** ESCALATED, to administrators' webhooks (no department). */
async function escalationEvents({ pool, receipt, logs, stageInfo }: Derivation): Promise<EventDraft[]> {
  const escalated = logs.registry("StageEscalated");
  const codeOf = await codesOf(
    pool,
    escalated.map((e) => Number(e.args.departmentId)).filter((id) => id > 0),
  );
  return escalated.map((escalation) => {
    const departmentId = Number(escalation.args.departmentId);
    return {
      key: `escalated:${receipt.hash}:${logs.tokenId}:${escalation.args.stage}`,
      type: "ESCALATED",
      departments: [],
      data: {
        stage: stageInfo(escalation.args.stage),
        cause: Number(escalation.args.cause) === 1 ? "TIMEOUT" : "REJECTION",
        ...(departmentId > 0 ? { rejectedBy: codeOf(departmentId) } : {}),
      },
    };
  });
}

/** The licence's status changes, to every department of the request's workflow. */
function statusEvents({ receipt, logs, routed }: Derivation): EventDraft[] {
  const drafts: EventDraft[] = [];
  for (const change of logs.token("LicenceStatusChanged")) {
    const data = { status: LICENCE_STATUS_NAMES[Number(change.args.to)], reasonCode: Number(change.args.reasonCode) };
    const draft = (name: string, type: PlatformEvent["type"]) => ({
      key: `${name}:${receipt.hash}:${logs.tokenId}`,
      type,
      departments: routed,
      data,
    });
    if (change.args.to === LICENCE_STATUS.Approved && change.args.from !== LICENCE_STATUS.Suspended)
      drafts.push(draft("approved", "REQUEST_APPROVED"));
    if (change.args.to === LICENCE_STATUS.Rejected) drafts.push(draft("rejected", "REQUEST_REJECTED"));
    if (change.args.to === LICENCE_STATUS.PendingResubmission) drafts.push(draft("returned", "CHANGES_REQUESTED"));
    if (change.args.to === LICENCE_STATUS.Revoked) drafts.push(draft("revoked", "CERTIFICATE_REVOKED"));
  }
  return drafts;
}

/** CERTIFICATE_ISSUED, to every department of the request's workflow. */
function issuedEvents({ receipt, logs, routed }: Derivation): EventDraft[] {
  return logs.token("LicenceIssued").map((issue) => {
    const expiresAt = Number(issue.args.expiresAt);
    return {
      key: `issued:${receipt.hash}:${logs.tokenId}`,
      type: "CERTIFICATE_ISSUED",
      departments: routed,
      data: {
        issuedAt: isoFromUnixSeconds(issue.args.issuedAt),
        expiresAt: expiresAt ? isoFromUnixSeconds(expiresAt) : null,
      },
    };
  });
}

/** Records the events and keeps the request's stage-timeout job in line with the chain, in one transaction. */
async function recordDerived(
  pool: pg.Pool,
  txId: string,
  tokenId: bigint,
  events: PlatformEvent[],
  timeout: StageTimeout | null | undefined,
): Promise<{ events: number; deliveries: number }> {
  return withTransaction(pool, async (client) => {
    const deliveries = await recordEvents(client, events, txId);
    if (timeout === null) await cancelJob(client, JOB_NAMES.stageTimeout, `token:${tokenId}`);
    else if (timeout) await enqueueJob(client, JOB_NAMES.stageTimeout, `token:${tokenId}`, timeout.data, timeout.runAt);
    return { events: events.length, deliveries };
  });
}

interface StageTimeout {
  runAt: Date;
  data: { tokenId: string; stage: number; startedAt: number; deadline: number };
}

/** The running stage timeout of a request (null: none is running). */
async function timeoutOf(chain: ChainViews): Promise<StageTimeout | null> {
  const latest = await chain.progressAt("latest");
  if (!timeoutPending(latest)) return null;
  const seconds = await chain.timeoutSecondsOf(latest.workflowId, latest.stage);
  if (seconds === 0) return null;
  const deadline = latest.stageStartedAt + seconds;
  return {
    runAt: dateFromUnixSeconds(deadline),
    data: { tokenId: chain.tokenId.toString(), stage: latest.stage, startedAt: latest.stageStartedAt, deadline },
  };
}
