/**
 * Every decision of a licence, checked against the call that made it rather than taken on the event's word: the
 * call must agree with the event and with the chain just before it, come from the department's wallet of the time
 * (decide) or carry that wallet's signature, recomputed here (decideBySig). A call that cannot be found is a
 * finding ("cannot verify"), never a pass.
 */
import { TypedDataEncoder, getAddress, type Result } from "ethers";
import { DECISION_NAMES, isoTime, type DecisionAudit, type StandingApproval } from "./auditRecord.ts";
import type { ContractViews } from "./contractViews.ts";
import {
  custodyName,
  domainProblem,
  registryCall,
  typedDomain,
  type DepartmentWallets,
  type WalletPeriod,
} from "./departmentWallets.ts";
import { isBefore, type ChainEvent } from "./logReader.ts";
import type { PasskeyAccounts } from "./passkeyAudit.ts";
import { replayReview } from "./reviewReplay.ts";
import type { TransactionLookups } from "./transactionLookups.ts";
import { DECISION_TYPES, stageNumber } from "../../abis/index.ts";

/** The furthest ahead a decision's deadline may be (the registry's MAX_DECISION_LIFETIME). */
export const MAX_DECISION_LIFETIME = 86_400;

/** Each stage's positions as `decisionsOf` returns them at the audited block. */
export type StageLedgers = { departmentId: number; status: number }[][];

export async function readStageLedgers(
  views: ContractViews,
  tokenId: number,
  stageCount: number,
  reviewStarted: boolean,
): Promise<StageLedgers> {
  // Before submission decisionsOf answers nothing: no stage has a ledger yet.
  if (!reviewStarted) return [];
  return Promise.all(
    Array.from({ length: stageCount }, async (_, stage) => {
      const [ids, statuses] = await views.call("ApprovalRegistry", "decisionsOf", tokenId, stage);
      return [...ids].map((id, p) => ({ departmentId: Number(id), status: Number(statuses[p]) }));
    }),
  );
}

/** What the decision checks need to know of the chain besides the events. */
export interface DecisionContext {
  chainId: number;
  approvalRegistry: string;
  lookups: Pick<TransactionLookups, "transactionOf" | "timeOf" | "callsTo" | "eip712Domain" | "isSignedBy">;
  /** Recognises passkey accounts, whose signatures the auditor verifies itself (absent: the wallet's answer only). */
  passkeys?: Pick<PasskeyAccounts, "account" | "expected">;
}

export async function auditDecisions(
  events: ChainEvent[],
  ledgers: StageLedgers,
  departments: DepartmentWallets,
  context: DecisionContext,
  findings: string[],
): Promise<{ decisions: DecisionAudit[]; approvals: StandingApproval[] }> {
  const history: DecisionHistory = {
    recorded: events.filter((e) => e.name === "DecisionRecorded"),
    invalidations: events.filter((e) => e.name === "ReviewInvalidated"),
    ledgers,
    departments,
    before: chainBefore(events),
  };
  // Each decision's findings are kept apart while the lookups run concurrently, then listed in chain order.
  const audited = await Promise.all(history.recorded.map((event, i) => auditDecision(event, i, history, context)));
  for (const a of audited) findings.push(...a.findings);
  findings.push(...replayReview(events, departments));
  const decisions = audited.map((a) => a.decision);
  return { decisions, approvals: standingApprovals(ledgers, decisions, departments, findings) };
}

/** The licence's review as the chain held it just before a decision, replayed from its events. */
interface ChainBefore {
  /** The current stage (index) and its round (the stage's start time), from the last StageStarted. */
  stage: number | undefined;
  round: bigint | undefined;
  /** Each document index's latest anchored version and hash. */
  documents: Map<number, { version: number; sha256: string }>;
}

/** For each DecisionRecorded (by transaction hash and log index), the chain just before it. */
function chainBefore(events: ChainEvent[]): Map<ChainEvent, ChainBefore> {
  const states = new Map<ChainEvent, ChainBefore>();
  let stage: number | undefined;
  let round: bigint | undefined;
  const documents = new Map<number, { version: number; sha256: string }>();
  for (const e of events) {
    if (e.name === "StageStarted") {
      stage = Number(e.args.stage);
      round = BigInt(e.args.startedAt);
    } else if (e.name === "DocumentAnchored") {
      const docIndex = Number(e.args.docIndex);
      const version = Number(e.args.version);
      if (version > (documents.get(docIndex)?.version ?? 0))
        documents.set(docIndex, { version, sha256: String(e.args.sha256Hash).toLowerCase() });
    } else if (e.name === "DecisionRecorded") {
      states.set(e, { stage, round, documents: new Map(documents) });
    }
  }
  return states;
}

/** What one decision is checked against: every decision and invalidation of the licence, and decisionsOf now. */
interface DecisionHistory {
  recorded: ChainEvent[];
  invalidations: ChainEvent[];
  ledgers: StageLedgers;
  departments: DepartmentWallets;
  before: Map<ChainEvent, ChainBefore>;
}

/** The position a decision fills: one department in one stage. */
const positionOf = (e: ChainEvent) => `${Number(e.args.stage)}:${Number(e.args.departmentId)}`;

async function auditDecision(
  event: ChainEvent,
  i: number,
  history: DecisionHistory,
  context: DecisionContext,
): Promise<{ decision: DecisionAudit; findings: string[] }> {
  const findings: string[] = [];
  const index = Number(event.args.stage);
  const stage = stageNumber(index);
  const departmentId = Number(event.args.departmentId);
  const decision = DECISION_NAMES[Number(event.args.decision)];
  const code = history.departments.codeOf(departmentId) ?? `#${departmentId}`;
  const what = `decision ${decision} of ${code} in stage ${stage} (tx ${event.transactionHash})`;
  const signer = getAddress(event.args.signer);
  const custody = custodyName(event.args.custody);
  const period = history.departments.periodAt(departmentId, event);
  const { route, sender, passkeys } = await decisionRoute(event, { what, period, history }, context, findings);
  findings.push(...walletFindings(event, { what, code, signer, custody, period }));
  if (!history.departments.activeAt(departmentId, event))
    findings.push(`${what} was made while ${code} was not active (DepartmentActiveSet)`);
  // Any finding so far (how it was sent, by which wallet) means the decision is not the department wallet's own.
  const walletMatches = findings.length === 0;
  const next = history.recorded.slice(i + 1).find((later) => positionOf(later) === positionOf(event));
  const invalidation = history.invalidations.find(
    (inv) => positionOf(inv) === positionOf(event) && isBefore(event, inv) && (!next || isBefore(inv, next)),
  );
  const status = history.ledgers[index]?.find((p) => p.departmentId === departmentId)?.status;
  const fate = fateOf(decision, { next, invalidation, status });
  if (fate === "CONTRADICTED") {
    findings.push(
      `decisionsOf says ${code} is ${DECISION_NAMES[status!]} in stage ${stage}, but its last recorded decision there is ${decision} (tx ${event.transactionHash})`,
    );
  }
  const audit: DecisionAudit = {
    stage,
    departmentId,
    departmentCode: code,
    decision,
    reasonCode: Number(event.args.reasonCode),
    reviewed: reviewedVersions(Number(event.args.reviewedMask), BigInt(event.args.documentVersions)),
    remarksHash: event.args.remarksHash,
    sender,
    signer,
    custody,
    route,
    departmentWallet: period?.wallet ?? "(not registered)",
    departmentCustody: period?.custody ?? null,
    signedBy: (period?.custody ?? custody) === "DEPARTMENT_HELD" ? "department-signed" : "platform-signed",
    walletMatches,
    fate,
    ...(passkeys ? { passkeys } : {}),
    ...(fate === "INVALIDATED" ? { invalidatedBy: invalidatedBy(invalidation!) } : {}),
    transactionHash: event.transactionHash,
    blockNumber: event.blockNumber,
    timestamp: await context.lookups.timeOf(event.blockNumber),
  };
  return { decision: audit, findings };
}

/** The document version that invalidated an approval, from its ReviewInvalidated. */
function invalidatedBy({ args, transactionHash, blockNumber }: ChainEvent) {
  return { docIndex: Number(args.docIndex), newVersion: Number(args.newVersion), transactionHash, blockNumber };
}

interface WalletFacts {
  what: string;
  code: string;
  signer: string;
  custody: string;
  period?: WalletPeriod;
}

/** The signer and custody against the department's wallet at that block, and no wallet that took over early. */
function walletFindings(event: ChainEvent, { what, code, signer, custody, period }: WalletFacts): string[] {
  const findings: string[] = [];
  const departmentWallet = period?.wallet ?? "(not registered)";
  if (signer !== departmentWallet) {
    findings.push(
      `${what} was signed by ${signer}, but the department's wallet at block ${event.blockNumber} was ${departmentWallet}`,
    );
  }
  if (period && custody !== period.custody) {
    findings.push(
      `${what} records custody ${custody}, but the department's custody at block ${event.blockNumber} was ${period.custody}`,
    );
  }
  if (period?.unconsented) {
    findings.push(
      `${what} on licence ${event.args.tokenId} was signed by ${period.wallet}, which ${code} got at block ${period.since.blockNumber} (tx ${period.since.transactionHash}) through a wallet change its outgoing department-held wallet ${period.previous!.wallet} did not consent to`,
    );
  }
  if (period?.early) {
    findings.push(
      `${what} was made by ${period.wallet}, which became ${code}'s wallet at block ${period.since.blockNumber} without waiting the wallet delay after its proposal${period.proposal ? ` (proposed at block ${period.proposal.blockNumber})` : " (none was pending)"}`,
    );
  }
  return findings;
}

/**
 * What became of a decision: invalidated by a new document version (an approval), superseded by the department's
 * next decision in that stage, or, when it is the last, what decisionsOf says now (cleared, standing, or contradicted).
 */
function fateOf(
  decision: string,
  later: { next?: ChainEvent; invalidation?: ChainEvent; status?: number },
): DecisionAudit["fate"] {
  if (later.invalidation && decision === "APPROVED") return "INVALIDATED";
  if (later.next) return "SUPERSEDED";
  if (later.status === undefined || DECISION_NAMES[later.status] === "PENDING") return "CLEARED";
  if (DECISION_NAMES[later.status] === decision) return "STANDING";
  return "CONTRADICTED";
}

/**
 * The approvals standing now, each explained by its department's last decision in that stage; a non-pending position
 * of decisionsOf that no decision explains is a finding.
 */
function standingApprovals(
  ledgers: StageLedgers,
  decisions: DecisionAudit[],
  departments: DepartmentWallets,
  findings: string[],
): StandingApproval[] {
  const approvals: StandingApproval[] = [];
  ledgers.forEach((positions, index) => {
    const stage = stageNumber(index);
    for (const { departmentId, status } of positions) {
      const name = DECISION_NAMES[status];
      if (name === "PENDING") continue;
      const code = departments.codeOf(departmentId) ?? `#${departmentId}`;
      const last = decisions.filter((d) => d.stage === stage && d.departmentId === departmentId).at(-1);
      // REVIEW_REQUIRED is an approval a new document version invalidated; any other status is the last decision itself.
      const explained = name === "REVIEW_REQUIRED" ? last?.fate === "INVALIDATED" : last?.fate === "STANDING";
      if (!explained) {
        // A CONTRADICTED decision was reported above.
        if (last?.fate !== "CONTRADICTED")
          findings.push(
            `decisionsOf says ${code} is ${name} in stage ${stage}, but ${last ? `its last recorded decision there is ${last.decision} (${last.fate})` : "no decision of it was recorded there"}`,
          );
        continue;
      }
      if (name === "APPROVED")
        approvals.push({
          stage,
          departmentCode: code,
          approvedAt: last!.timestamp,
          transactionHash: last!.transactionHash,
        });
    }
  });
  return approvals;
}

/** Document `docIndex`'s version in a decision's packed word (count in bits 8..15, 15 bits per document from 16). */
const versionIn = (packed: bigint, docIndex: number) => Number((packed >> BigInt(16 + 15 * docIndex)) & 0x7fffn);

/** The indexes a mask names: bit i is document i. */
const inMask = (mask: number) => [...Array(16).keys()].filter((docIndex) => (mask >> docIndex) & 1);

/** The versions a decision reviewed: bit i of the mask is document i; its version is in the packed word. */
const reviewedVersions = (mask: number, packed: bigint) =>
  inMask(mask).map((docIndex) => ({ docIndex, version: versionIn(packed, docIndex) }));

type Decision = Record<string, unknown>;

/** How the decision reached the chain: the decide or decideBySig call that made it, its fields, and who made it. */
async function decisionRoute(
  event: ChainEvent,
  { what, period, history }: { what: string; period?: WalletPeriod; history: DecisionHistory },
  context: DecisionContext,
  findings: string[],
): Promise<{ route: DecisionAudit["route"]; sender: string; passkeys?: DecisionAudit["passkeys"] }> {
  const tokenId = BigInt(event.args.tokenId);
  const departmentId = Number(event.args.departmentId);
  const found = await registryCall(
    context.lookups,
    { ...event, address: context.approvalRegistry },
    ["decide", "decideBySig"],
    (args) => BigInt(args.decision.tokenId) === tokenId && Number(args.decision.departmentId) === departmentId,
  );
  if (typeof found === "string") {
    findings.push(`${what}: ${found}`);
    return { route: "UNKNOWN", sender: (await context.lookups.transactionOf(event.transactionHash)).from };
  }
  const decision = plainDecision(found.args.decision);
  const wallet = period?.wallet;
  findings.push(...fieldFindings(event, decision, history.before.get(event), what));
  const nonce = history.departments.nonceAt(departmentId, event);
  if (nonce === undefined || BigInt(decision.nonce as bigint) !== BigInt(nonce))
    findings.push(
      `${what}: its call carries nonce ${decision.nonce}, but the department's next nonce then was ${nonce ?? "none (not registered)"}`,
    );
  const minedAt = Date.parse(await context.lookups.timeOf(event.blockNumber)) / 1000;
  const deadline = Number(decision.deadline);
  if (minedAt > deadline)
    findings.push(`${what} was recorded at ${isoTime(minedAt)}, after its deadline ${isoTime(deadline)}`);
  else if (deadline > minedAt + MAX_DECISION_LIFETIME)
    findings.push(
      `${what} carries the deadline ${isoTime(deadline)}, more than ${MAX_DECISION_LIFETIME} s after it was recorded (${isoTime(minedAt)})`,
    );

  if (found.name === "decide") {
    if (found.from !== wallet)
      findings.push(
        `${what} is a direct decide call made by ${found.from}, not by the department's wallet ${wallet ?? "(not registered)"}`,
      );
    return { route: "SENT", sender: found.from };
  }
  const domain = await context.lookups.eip712Domain(context.approvalRegistry, event.blockNumber);
  if (!domain) {
    findings.push(
      `${what}: cannot verify its signature: the registry's eip712Domain() could not be read at block ${event.blockNumber}`,
    );
    return { route: "RELAYED", sender: found.from };
  }
  const wrongDomain = domainProblem(domain, context.chainId, context.approvalRegistry);
  if (wrongDomain) findings.push(`${what}: ${wrongDomain}`);
  const digest = TypedDataEncoder.hash(typedDomain(domain), DECISION_TYPES, decision);
  const signature = String(found.args.signature);
  const onChain = !!wallet && (await context.lookups.isSignedBy(wallet, digest, signature, event.blockNumber));
  if (!onChain)
    findings.push(
      `${what} was relayed by ${found.from} through decideBySig, but the signature is not the department wallet ${wallet ?? "(not registered)"}'s`,
    );
  // A passkey account's answer is not taken alone: each reviewer's assertion is verified here as well.
  const account = wallet && context.passkeys ? await context.passkeys.account(wallet) : null;
  if (!account) return { route: "RELAYED", sender: found.from };
  const checked = account.checkSignature(digest, signature, event, {
    what: `${what} on licence ${tokenId}`,
    onChain,
    expected: context.passkeys!.expected,
  });
  findings.push(...checked.findings);
  return { route: "RELAYED", sender: found.from, passkeys: checked.passkeys };
}

/** The call's Decision as plain values, in DECISION_TYPES' fields. */
function plainDecision(d: Result): Decision {
  return Object.fromEntries(
    DECISION_TYPES.Decision.map(({ name }) => [name, name === "documents" ? [...d.documents].map(String) : d[name]]),
  );
}

/** The call's fields against the event, and against the chain just before the decision (replayed from events). */
function fieldFindings(event: ChainEvent, d: Decision, before: ChainBefore | undefined, what: string): string[] {
  const findings: string[] = [];
  const differ = (field: string, call: unknown, recorded: unknown) =>
    String(call).toLowerCase() !== String(recorded).toLowerCase()
      ? `${field} (call ${call}, event ${recorded})`
      : undefined;
  const eventMask = Number(event.args.reviewedMask);
  const count = before ? Math.max(-1, ...before.documents.keys()) + 1 : 0;
  const everyDocument = (1 << count) - 1;
  const callMask = Number(d.reviewedMask);
  const againstEvent = [
    differ("tokenId", d.tokenId, event.args.tokenId),
    differ("departmentId", d.departmentId, event.args.departmentId),
    differ("stage", d.stage, event.args.stage),
    differ("decision", d.decision, event.args.decision),
    differ("reasonCode", d.reasonCode, event.args.reasonCode),
    differ("remarksHash", d.remarksHash, event.args.remarksHash),
    // A mask of 0 means every document of the request: the event records them.
    callMask === 0 && eventMask === everyDocument ? undefined : differ("reviewedMask", callMask, eventMask),
  ].filter(Boolean);
  if (againstEvent.length)
    findings.push(`${what}: the call that made it differs from the recorded decision in ${againstEvent.join(", ")}`);

  const againstChain: string[] = [];
  if (!before || before.stage === undefined) againstChain.push("no stage had started");
  else {
    if (Number(d.stage) !== before.stage) againstChain.push(`stage ${d.stage} (current: ${before.stage})`);
    if (BigInt(d.round as bigint) !== before.round)
      againstChain.push(`round ${d.round} (the stage started at ${before.round})`);
  }
  const documents = before?.documents ?? new Map();
  const expected = inMask(eventMask).map((docIndex) => documents.get(docIndex)?.sha256 ?? "(no such document)");
  const named = (d.documents as string[]).map((h) => h.toLowerCase());
  if (named.length !== expected.length || named.some((h, k) => h !== expected[k]))
    againstChain.push(
      `documents [${named.join(", ")}] (the latest anchored versions of the documents in mask ${eventMask}: [${expected.join(", ")}])`,
    );
  const word = BigInt(event.args.documentVersions);
  const recordedCount = Number((word >> 8n) & 0xffn);
  const versions = Array.from({ length: count }, (_, i) => versionIn(word, i));
  if (recordedCount !== count || versions.some((v, i) => v !== documents.get(i)?.version))
    againstChain.push(
      `the event's document versions (${recordedCount} documents, v${versions.join(", v")}) against the anchored ones (${count} documents, v${[...Array(count).keys()].map((i) => documents.get(i)?.version ?? 0).join(", v")})`,
    );
  if (againstChain.length)
    findings.push(`${what} does not match the chain at block ${event.blockNumber}: ${againstChain.join("; ")}`);
  return findings;
}
