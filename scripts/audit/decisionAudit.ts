/**
 * Every decision of a licence, from DecisionRecorded: its signer and custody checked against the department's
 * wallet and custody at that point of the chain, its transaction checked to be either sent by that wallet or a
 * decideBySig whose signature verifies, and no decision by a wallet that took over before its delay ran out; what
 * became of each decision (from the later events and the
 * current `decisionsOf`); and the approvals standing now. The current state must be explained by the events:
 * every non-pending position of `decisionsOf` by its department's last decision in that stage.
 */
import { TypedDataEncoder, getAddress, recoverAddress } from "ethers";
import { DECISION_NAMES, isoTime, type DecisionAudit, type StandingApproval } from "./auditRecord.ts";
import { approvalRegistryAbi, type ContractViews } from "./contractViews.ts";
import { custodyName, type DepartmentWallets } from "./departmentWallets.ts";
import { isBefore, type ChainEvent } from "./logReader.ts";
import type { TransactionLookups } from "./transactionLookups.ts";
import { DECISION_DOMAIN_NAME, DECISION_DOMAIN_VERSION, DECISION_TYPES, stageNumber } from "../../abis/index.ts";

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
  return Promise.all(Array.from({ length: stageCount }, (_, stage) => views.decisionsOf(tokenId, stage)));
}

/** What the decision checks need to know of the chain besides the events. */
export interface DecisionContext {
  chainId: number;
  approvalRegistry: string;
  lookups: Pick<TransactionLookups, "transactionOf" | "timeOf" | "hasCode" | "isValidSignature">;
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
  };
  // Each decision's findings are kept apart while the lookups run concurrently, then listed in chain order.
  const audited = await Promise.all(history.recorded.map((event, i) => auditDecision(event, i, history, context)));
  for (const a of audited) findings.push(...a.findings);
  const decisions = audited.map((a) => a.decision);
  return { decisions, approvals: standingApprovals(ledgers, decisions, departments, findings) };
}

/** What one decision is checked against: every decision and invalidation of the licence, and decisionsOf now. */
interface DecisionHistory {
  recorded: ChainEvent[];
  invalidations: ChainEvent[];
  ledgers: StageLedgers;
  departments: DepartmentWallets;
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
  const { route, sender } = await decisionRoute(event, signer, context, what, findings);
  findings.push(...walletFindings(event, { what, code, signer, custody, period }));
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
    walletMatches,
    fate,
    ...(fate === "INVALIDATED"
      ? {
          invalidatedBy: {
            docIndex: Number(invalidation!.args.docIndex),
            newVersion: Number(invalidation!.args.newVersion),
            transactionHash: invalidation!.transactionHash,
            blockNumber: invalidation!.blockNumber,
          },
        }
      : {}),
    transactionHash: event.transactionHash,
    blockNumber: event.blockNumber,
    timestamp: await context.lookups.timeOf(event.blockNumber),
  };
  return { decision: audit, findings };
}

/** The signer and custody against the department's wallet at that block, and no wallet that took over early. */
function walletFindings(
  event: ChainEvent,
  {
    what,
    code,
    signer,
    custody,
    period,
  }: { what: string; code: string; signer: string; custody: string; period: ReturnType<DepartmentWallets["periodAt"]> },
): string[] {
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

/** The versions a decision reviewed: bit i of the mask is document i; its version is in the packed word. */
function reviewedVersions(mask: number, packed: bigint): { docIndex: number; version: number }[] {
  const reviewed: { docIndex: number; version: number }[] = [];
  for (let docIndex = 0; docIndex < 16; docIndex++) {
    if ((mask >> docIndex) & 1)
      reviewed.push({ docIndex, version: Number((packed >> BigInt(16 + 15 * docIndex)) & 0x7fffn) });
  }
  return reviewed;
}

const DIRECT = ["approve", "reject", "requestChanges"];

/**
 * How the decision reached the chain, from its transaction alone: sent by the signer itself to the registry
 * (approve / reject / requestChanges), or a decideBySig call whose signed decision is this one and whose signature
 * the auditor verifies again itself (ECDSA recovery for an EOA, the wallet's own EIP-1271 answer for a contract),
 * rather than trusting the verifier contract. Anything else is a finding.
 */
async function decisionRoute(
  event: ChainEvent,
  signer: string,
  context: DecisionContext,
  what: string,
  findings: string[],
): Promise<{ route: DecisionAudit["route"]; sender: string }> {
  const tx = await context.lookups.transactionOf(event.transactionHash);
  const call = tx.to === context.approvalRegistry ? safeParse(tx.data) : undefined;
  const tokenId = BigInt(event.args.tokenId);
  if (call && DIRECT.includes(call.name)) {
    if (tx.from !== signer)
      findings.push(`${what} is a direct ${call.name} call sent by ${tx.from}, not by its signer ${signer}`);
    else if (BigInt(call.args.tokenId) !== tokenId)
      findings.push(`${what}: its transaction's ${call.name} is for token ${call.args.tokenId}`);
    return { route: "SENT", sender: tx.from };
  }
  if (call?.name === "decideBySig") {
    const [signed, signature] = call.args as unknown as [Record<string, bigint | string>, string];
    const value = Object.fromEntries(DECISION_TYPES.Decision.map(({ name }) => [name, signed[name]]));
    const mismatched = [
      ["tokenId", tokenId],
      ["departmentId", BigInt(event.args.departmentId)],
      ["decision", BigInt(event.args.decision)],
      ["reasonCode", BigInt(event.args.reasonCode)],
      ["remarksHash", String(event.args.remarksHash).toLowerCase()],
    ].filter(
      ([name, expected]) =>
        (typeof expected === "string" ? String(value[name as string]).toLowerCase() : BigInt(value[name as string])) !==
        expected,
    );
    if (mismatched.length)
      findings.push(`${what}: the decideBySig call carries a different ${mismatched.map(([n]) => n).join(", ")}`);
    const digest = TypedDataEncoder.hash(
      {
        name: DECISION_DOMAIN_NAME,
        version: DECISION_DOMAIN_VERSION,
        chainId: context.chainId,
        verifyingContract: context.approvalRegistry,
      },
      DECISION_TYPES,
      value,
    );
    let valid: boolean;
    if (await context.lookups.hasCode(signer, event.blockNumber))
      valid = await context.lookups.isValidSignature(signer, digest, signature, event.blockNumber);
    else {
      try {
        valid = recoverAddress(digest, signature) === signer;
      } catch {
        valid = false;
      }
    }
    if (!valid)
      findings.push(`${what} was relayed by ${tx.from} through decideBySig, but the signature is not ${signer}'s`);
    const minedAt = Date.parse(await context.lookups.timeOf(event.blockNumber)) / 1000;
    if (minedAt > Number(value.deadline))
      findings.push(
        `${what} was relayed at ${isoTime(minedAt)}, after its signature's deadline ${isoTime(value.deadline as bigint)}`,
      );
    return { route: "RELAYED", sender: tx.from };
  }
  findings.push(
    `${what} came from a transaction that is neither a decision sent by ${signer} to the approval registry nor a decideBySig call (to ${tx.to}, selector ${tx.data.slice(0, 10)})`,
  );
  return { route: "UNKNOWN", sender: tx.from };
}

function safeParse(data: string) {
  try {
    return approvalRegistryAbi.parseTransaction({ data }) ?? undefined;
  } catch {
    return undefined;
  }
}
