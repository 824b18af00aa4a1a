/**
 * Every decision of a licence, from DecisionRecorded: its signer and custody checked against the department's
 * wallet and custody at that point of the chain, its transaction checked to be either sent by that wallet or a
 * decideBySig whose signature verifies, and no decision by a wallet that took over before its delay ran out; what
 * became of each decision (from the later events and the
 * current `decisionsOf`); and the approvals standing now. The current state must be explained by the events:
 * every non-pending position of `decisionsOf` by its department's last decision in that stage.
 */
import { TypedDataEncoder, getAddress, recoverAddress } from "ethers";
import { DECISION_NAMES, type DecisionAudit, type StandingApproval } from "./auditRecord.ts";
import { approvalRegistryAbi, type ContractViews } from "./contractViews.ts";
import { custodyName, type DepartmentWallets } from "./departmentWallets.ts";
import { isBefore, type ChainEvent } from "./logReader.ts";
import type { TransactionLookups } from "./transactionLookups.ts";

/** Each stage's positions as `decisionsOf` returns them at the audited block. */
export type StageLedgers = { departmentId: number; status: number }[][];

export async function readStageLedgers(views: ContractViews, tokenId: number, stageCount: number, reviewStarted: boolean): Promise<StageLedgers> {
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
  const { lookups } = context;
  const recorded = events.filter((e) => e.name === "DecisionRecorded");
  const invalidations = events.filter((e) => e.name === "ReviewInvalidated");
  const key = (e: ChainEvent) => `${Number(e.args.stage)}:${Number(e.args.departmentId)}`;
  const currentStatus = (stage: number, departmentId: number) => ledgers[stage]?.find((p) => p.departmentId === departmentId)?.status;

  // Each decision's findings are kept apart while the lookups run concurrently, then listed in chain order.
  const audited = await Promise.all(
    recorded.map(async (event, i): Promise<{ decision: DecisionAudit; findings: string[] }> => {
      const findings: string[] = [];
      const stage = Number(event.args.stage);
      const departmentId = Number(event.args.departmentId);
      const decision = DECISION_NAMES[Number(event.args.decision)];
      const code = departments.codeOf(departmentId) ?? `#${departmentId}`;
      const what = `decision ${decision} of ${code} in stage ${stage} (tx ${event.transactionHash})`;
      const signer = getAddress(event.args.signer);
      const custody = custodyName(event.args.custody);
      const period = departments.periodAt(departmentId, event);
      const departmentWallet = period?.wallet ?? "(not registered)";
      const { route, sender } = await decisionRoute(event, signer, context, what, findings);
      if (signer !== departmentWallet) {
        findings.push(`${what} was signed by ${signer}, but the department's wallet at block ${event.blockNumber} was ${departmentWallet}`);
      }
      if (period && custody !== period.custody) {
        findings.push(`${what} records custody ${custody}, but the department's custody at block ${event.blockNumber} was ${period.custody}`);
      }
      if (period?.early) {
        findings.push(`${what} was made by ${period.wallet}, which became ${code}'s wallet at block ${period.since.blockNumber} without waiting the wallet delay after its proposal${period.proposal ? ` (proposed at block ${period.proposal.blockNumber})` : " (none was pending)"}`);
      }
      const walletMatches = findings.length === 0;

      const next = recorded.slice(i + 1).find((later) => key(later) === key(event));
      const invalidation = invalidations.find((inv) => key(inv) === key(event) && isBefore(event, inv) && (!next || isBefore(inv, next)));
      let fate: DecisionAudit["fate"];
      if (invalidation && decision === "APPROVED") fate = "INVALIDATED";
      else if (next) fate = "SUPERSEDED";
      else {
        const status = currentStatus(stage, departmentId);
        if (status === undefined || DECISION_NAMES[status] === "PENDING") fate = "CLEARED";
        else if (DECISION_NAMES[status] === decision) fate = "STANDING";
        else {
          fate = "CONTRADICTED";
          findings.push(`decisionsOf says ${code} is ${DECISION_NAMES[status]} in stage ${stage}, but its last recorded decision there is ${decision} (tx ${event.transactionHash})`);
        }
      }

      const decisionAudit: DecisionAudit = {
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
        departmentWallet,
        departmentCustody: period?.custody ?? null,
        walletMatches,
        fate,
        ...(fate === "INVALIDATED"
          ? { invalidatedBy: { docIndex: Number(invalidation!.args.docIndex), newVersion: Number(invalidation!.args.newVersion), transactionHash: invalidation!.transactionHash, blockNumber: invalidation!.blockNumber } }
          : {}),
        transactionHash: event.transactionHash,
        blockNumber: event.blockNumber,
        timestamp: await lookups.timeOf(event.blockNumber),
      };
      return { decision: decisionAudit, findings };
    }),
  );
  for (const a of audited) findings.push(...a.findings);
  const decisions = audited.map((a) => a.decision);

  const approvals: StandingApproval[] = [];
  ledgers.forEach((positions, stage) => {
    for (const { departmentId, status } of positions) {
      const name = DECISION_NAMES[status];
      if (name === "PENDING") continue;
      const code = departments.codeOf(departmentId) ?? `#${departmentId}`;
      const last = decisions.filter((d) => d.stage === stage && d.departmentId === departmentId).at(-1);
      // REVIEW_REQUIRED is an approval a new document version invalidated; any other status is the last decision itself.
      const explained = name === "REVIEW_REQUIRED" ? last?.fate === "INVALIDATED" : last?.fate === "STANDING";
      if (!explained) {
        // A CONTRADICTED decision was reported above.
        if (last?.fate !== "CONTRADICTED") findings.push(`decisionsOf says ${code} is ${name} in stage ${stage}, but ${last ? `its last recorded decision there is ${last.decision} (${last.fate})` : "no decision of it was recorded there"}`);
        continue;
      }
      if (name === "APPROVED") approvals.push({ stage, departmentCode: code, approvedAt: last!.timestamp, transactionHash: last!.transactionHash });
    }
  });
  return { decisions, approvals };
}

/** The versions a decision reviewed: bit i of the mask is document i; its version is in the packed word. */
function reviewedVersions(mask: number, packed: bigint): { docIndex: number; version: number }[] {
  const reviewed: { docIndex: number; version: number }[] = [];
  for (let docIndex = 0; docIndex < 16; docIndex++) {
    if ((mask >> docIndex) & 1) reviewed.push({ docIndex, version: Number((packed >> BigInt(16 + 15 * docIndex)) & 0x7fffn) });
  }
  return reviewed;
}

const DIRECT = ["approve", "reject", "requestChanges"];
const DECISION_TYPES = {
  Decision: [
    { name: "tokenId", type: "uint256" }, { name: "departmentId", type: "uint16" }, { name: "decision", type: "uint8" },
    { name: "reasonCode", type: "uint8" }, { name: "reviewedMask", type: "uint16" }, { name: "reviewedVersions", type: "uint256" },
    { name: "remarksHash", type: "bytes32" }, { name: "nonce", type: "uint64" }, { name: "deadline", type: "uint64" },
  ],
};

/**
 * How the decision reached the chain, from its transaction alone: sent by the signer itself to the registry
 * (approve / reject / requestChanges), or a decideBySig call whose signed decision is this one and whose signature
 * the auditor verifies again itself (ECDSA recovery for an EOA, the wallet's own EIP-1271 answer for a contract),
 * rather than trusting the verifier contract. Anything else is a finding.
 */
async function decisionRoute(event: ChainEvent, signer: string, context: DecisionContext, what: string, findings: string[]): Promise<{ route: DecisionAudit["route"]; sender: string }> {
  const tx = await context.lookups.transactionOf(event.transactionHash);
  const call = tx.to === context.approvalRegistry ? safeParse(tx.data) : undefined;
  const tokenId = BigInt(event.args.tokenId);
  if (call && DIRECT.includes(call.name)) {
    if (tx.from !== signer) findings.push(`${what} is a direct ${call.name} call sent by ${tx.from}, not by its signer ${signer}`);
    else if (BigInt(call.args.tokenId) !== tokenId) findings.push(`${what}: its transaction's ${call.name} is for token ${call.args.tokenId}`);
    return { route: "SENT", sender: tx.from };
  }
  if (call?.name === "decideBySig") {
    const [signed, signature] = call.args as unknown as [Record<string, bigint | string>, string];
    const value = Object.fromEntries(DECISION_TYPES.Decision.map(({ name }) => [name, signed[name]]));
    const mismatched = [
      ["tokenId", tokenId], ["departmentId", BigInt(event.args.departmentId)], ["decision", BigInt(event.args.decision)],
      ["reasonCode", BigInt(event.args.reasonCode)], ["remarksHash", String(event.args.remarksHash).toLowerCase()],
    ].filter(([name, expected]) => (typeof expected === "string" ? String(value[name as string]).toLowerCase() : BigInt(value[name as string])) !== expected);
    if (mismatched.length) findings.push(`${what}: the decideBySig call carries a different ${mismatched.map(([n]) => n).join(", ")}`);
    const digest = TypedDataEncoder.hash(
      { name: "LicenceApprovalRegistry", version: "1", chainId: context.chainId, verifyingContract: context.approvalRegistry },
      DECISION_TYPES,
      value,
    );
    let valid: boolean;
    if (await context.lookups.hasCode(signer, event.blockNumber)) valid = await context.lookups.isValidSignature(signer, digest, signature, event.blockNumber);
    else {
      try {
        valid = recoverAddress(digest, signature) === signer;
      } catch {
        valid = false;
      }
    }
    if (!valid) findings.push(`${what} was relayed by ${tx.from} through decideBySig, but the signature is not ${signer}'s`);
    const minedAt = Date.parse(await context.lookups.timeOf(event.blockNumber)) / 1000;
    if (minedAt > Number(value.deadline)) findings.push(`${what} was relayed at ${new Date(minedAt * 1000).toISOString()}, after its signature's deadline ${new Date(Number(value.deadline) * 1000).toISOString()}`);
    return { route: "RELAYED", sender: tx.from };
  }
  findings.push(`${what} came from a transaction that is neither a decision sent by ${signer} to the approval registry nor a decideBySig call (to ${tx.to}, selector ${tx.data.slice(0, 10)})`);
  return { route: "UNKNOWN", sender: tx.from };
}

function safeParse(data: string) {
  try {
    return approvalRegistryAbi.parseTransaction({ data }) ?? undefined;
  } catch {
    return undefined;
  }
}
