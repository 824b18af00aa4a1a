/**
 * The audit for a person: one block of text per licence (facts first, then findings), and the comparison's
 * differences one per line as "field: chain X, API Y" so that a failing compare says exactly what disagrees.
 * Stages are numbered from 0, as on chain and in the API's answers.
 */
import type { Difference } from "./apiCompare.ts";
import type { ChainAudit, LicenceAudit } from "./auditRecord.ts";

export function auditText(audit: ChainAudit): string {
  const lines = [
    `Chain ${audit.chainId} at block ${audit.asOfBlock} (${audit.asOfTime})`,
    `  LicenceToken ${audit.contracts.LicenceToken}, DocumentRegistry ${audit.contracts.DocumentRegistry}, ApprovalRegistry ${audit.contracts.ApprovalRegistry}`,
  ];
  if (audit.licences.length === 0) lines.push("", "No licence has been minted.");
  for (const licence of audit.licences) lines.push("", ...licenceLines(licence, audit.contracts));
  return lines.join("\n");
}

function licenceLines(l: LicenceAudit, contracts: ChainAudit["contracts"]): string[] {
  // Status changes are made by role holders or by the approval registry itself: name the platform's contracts.
  const who = (address: string) => Object.entries(contracts).find(([, a]) => a === address)?.[0] ?? address;
  const docName = (docIndex: number) => l.documents.find((d) => d.docIndex === docIndex)?.docType || `document #${docIndex}`;
  const lines = [
    `Licence token ${l.tokenId}`,
    `  status     ${l.status}${l.reasonCode ? ` (reason ${l.reasonCode})` : ""}, validity ${l.validity}`,
    `  owner      ${l.owner}`,
    `  minted     ${l.mint.timestamp}  block ${l.mint.blockNumber}  tx ${l.mint.transactionHash}`,
    l.issuance
      ? `  issued     ${l.issuedAt}  block ${l.issuance.blockNumber}  tx ${l.issuance.transactionHash}  expires ${l.expiresAt ?? "never"}`
      : `  issued     no`,
    `  workflow   ${l.workflowId}: review ${l.review.phase} at stage ${l.review.stage} (stages 0..${l.review.stageCount - 1}); documents ${l.review.documentPhase}`,
    `  status history (${l.statusHistory.length})`,
    ...l.statusHistory.map((c) => `    ${c.timestamp}  ${c.from} -> ${c.to}${c.reasonCode ? ` (reason ${c.reasonCode})` : ""}  by ${who(c.actor)}  tx ${c.transactionHash}`),
    `  documents (${l.documents.length})`,
  ];
  for (const d of l.documents) {
    lines.push(`    #${d.docIndex} ${d.docType}  document ${d.documentId}  latest v${d.latestVersion}`);
    for (const v of d.versions) lines.push(`      v${v.version}  sha256 ${v.sha256}  ${v.isLatest ? "latest    " : "superseded"}  ${v.timestamp}  block ${v.blockNumber}  tx ${v.transactionHash}`);
  }
  lines.push(`  decisions (${l.decisions.length})`);
  for (const d of l.decisions) {
    const reviewed = d.reviewed.length ? d.reviewed.map((r) => `${docName(r.docIndex)} v${r.version}`).join(", ") : "none";
    const fate = d.invalidatedBy ? `INVALIDATED by ${docName(d.invalidatedBy.docIndex)} v${d.invalidatedBy.newVersion}` : d.fate;
    lines.push(
      `    stage ${d.stage}  ${d.departmentCode}  ${d.decision}${d.reasonCode ? ` (reason ${d.reasonCode})` : ""}  ${fate}  reviewed ${reviewed}`,
      `      ${d.timestamp}  block ${d.blockNumber}  tx ${d.transactionHash}`,
      `      sent by ${d.sender}  department wallet ${d.departmentWallet}  ${d.walletMatches ? "wallet ok" : "WALLET MISMATCH"}`,
    );
  }
  lines.push(`  standing approvals (${l.approvals.length})`);
  for (const a of l.approvals) lines.push(`    stage ${a.stage}  ${a.departmentCode}  ${a.approvedAt}  tx ${a.transactionHash}`);
  lines.push(l.findings.length ? `  FINDINGS (${l.findings.length})` : "  findings: none (events and views agree; every decision came from its department's wallet)");
  for (const finding of l.findings) lines.push(`    - ${finding}`);
  return lines;
}

export function differencesText(baseUrl: string, differences: Difference[]): string {
  if (differences.length === 0) return `Compared with ${baseUrl}: the API agrees with the chain on every field.`;
  const lines = [`Compared with ${baseUrl}: ${differences.length} difference${differences.length === 1 ? "" : "s"}`];
  for (const d of differences) lines.push(`  ${d.subject}  ${d.field}: chain ${show(d.chain)}, API ${show(d.api)}`);
  return lines.join("\n");
}

const show = (value: unknown) => (typeof value === "string" ? value : JSON.stringify(value) ?? "absent");
