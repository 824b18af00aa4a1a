/**
 * The audit for a person: one block of text per licence (facts first, then findings), and the comparison's
 * differences one per line as "field: chain X, API Y" so that a failing compare says exactly what disagrees.
 * Stages are numbered from 1, as in the audit record and the API's answers.
 */
import type { Difference } from "./apiCompare.ts";
import type { ChainAudit, LicenceAudit } from "./auditRecord.ts";

export function auditText(audit: ChainAudit): string {
  const lines = [
    `Chain ${audit.chainId} at block ${audit.asOfBlock} (${audit.asOfTime})`,
    `  LicenceToken ${audit.contracts.LicenceToken}, DocumentRegistry ${audit.contracts.DocumentRegistry}, ApprovalRegistry ${audit.contracts.ApprovalRegistry}, DecisionVerifier ${audit.contracts.DecisionVerifier}`,
    "",
    ...platformLines(audit),
  ];
  if (audit.licences.length === 0 && audit.wiring) lines.push("", "No licence has been minted.");
  for (const licence of audit.licences) lines.push("", ...licenceLines(licence, audit.contracts));
  return lines.join("\n");
}

function platformLines(audit: ChainAudit): string[] {
  const { roles, walletDelay } = audit.deployment;
  const keyName = (address: string) =>
    Object.entries(roles).find(([, a]) => a === address)?.[0] ??
    (address === audit.deployment.deployer ? "deployer" : undefined);
  const who = (address: string) => (keyName(address) ? `${address} (${keyName(address)})` : address);
  const w = audit.wiring;
  const lines = [
    `Platform`,
    `  keys       governance ${roles.governance}, admin ${roles.admin}, operator ${roles.operator}, keeper ${roles.keeper}`,
    ...startLines(audit),
    ...codeLines(audit),
  ];
  // No wiring: the audit stopped at code that is not the reviewed build, and read nothing through it.
  if (!w) return [...lines, ...findingLines(audit)];
  lines.push(
    `  wiring     token -> ${w.tokenApprovalRegistry} (set ${w.approvalRegistrySet.length}x), documents -> ${w.documentReviewRegistry} (set ${w.reviewRegistrySet.length}x), verifier ${w.decisionVerifier}${w.decisionVerifierHasCode ? "" : " (NO CODE)"}, wallet delay ${w.walletDelay} s (file: ${walletDelay} s)`,
    ...governanceLines(audit),
    `  role holders now (${audit.roles.holders.length})`,
    ...audit.roles.holders.map(
      (h) => `    ${h.contract.padEnd(16)} ${h.role.padEnd(18)} ${who(h.account)}  since ${h.since}`,
    ),
  );
  const later = audit.roles.grants.filter((g) => !g.fromDeployment);
  lines.push(`  role grants after the deployment (${later.length})`);
  for (const g of later) {
    lines.push(
      `    ${g.granted.timestamp}  ${g.contract} ${g.role} to ${who(g.account)} by ${who(g.grantedBy)}  tx ${g.granted.transactionHash}${g.revoked ? `; revoked ${g.revoked.timestamp} by ${who(g.revoked.by)}` : ""}`,
    );
  }
  const revoked = audit.roles.grants.filter((g) => g.revoked && g.fromDeployment);
  for (const g of revoked)
    lines.push(
      `    (deployment grant revoked) ${g.contract} ${g.role} of ${who(g.account)} at ${g.revoked!.timestamp} by ${who(g.revoked!.by)}`,
    );
  lines.push(`  departments (${audit.departments.length})`);
  for (const d of audit.departments) {
    lines.push(`    ${d.code} (#${d.departmentId})  wallet ${d.wallet}  ${d.custody}`);
    for (const c of d.changes) {
      const detail =
        c.kind === "REGISTERED"
          ? `${c.wallet} ${c.custody}`
          : c.kind === "PROPOSED"
            ? `${c.wallet} ${c.custody}, effective from ${c.effectiveAt}${c.replacedBy ? `, replaced by tx ${c.replacedBy}` : ""}`
            : c.kind === "CANCELLED"
              ? `${c.wallet} by ${c.by}`
              : `${c.previousWallet} -> ${c.wallet} ${c.custody}, ${c.waitedSeconds === null ? "no proposal" : `${c.waitedSeconds} s after its proposal`}${c.delayRespected ? "" : " (DELAY NOT RESPECTED)"}`;
      lines.push(`      ${c.timestamp}  ${c.kind.padEnd(10)} ${detail}  tx ${c.transactionHash}`);
    }
  }
  for (const p of audit.passkeyDepartments) {
    lines.push(
      `    ${p.departmentCode} passkey account ${p.account}  ${p.threshold} of ${p.reviewers.length} reviewers${p.reviewedCode ? "" : "  (NOT THE REVIEWED CODE)"}`,
    );
    for (const h of p.history)
      lines.push(
        `      block ${h.blockNumber}  ${h.kind.padEnd(9)} ${h.kind === "THRESHOLD" ? h.threshold : `reviewer ${h.reviewerId}`}  tx ${h.transactionHash}`,
      );
    for (const k of p.keyProofs)
      lines.push(
        `      block ${k.blockNumber}  key proof by ${k.passkeys.map((r) => `${r.reviewerId}${r.verified ? "" : " (NOT VERIFIED)"}`).join(", ")}  tx ${k.transactionHash}`,
      );
  }
  return [...lines, ...statusListLines(audit), ...findingLines(audit)];
}

function statusListLines({ statusLists }: ChainAudit): string[] {
  return [
    `  status lists (${statusLists.length})`,
    ...statusLists.map(
      (l) =>
        `    list ${l.list}  ${l.issued} issued, suspended [${l.suspended.join(", ")}], revoked [${l.revoked.join(", ")}]  ${l.anchor ? `anchor #${l.anchor.sequence} block ${l.anchor.blockNumber} ${l.matches ? "matches" : "DOES NOT MATCH"}` : "NOT ANCHORED"}`,
    ),
  ];
}

function findingLines(audit: ChainAudit): string[] {
  const lines = [
    audit.findings.length
      ? `  PLATFORM FINDINGS (${audit.findings.length})`
      : "  platform findings: none (code, roles, wiring and wallet changes as the deployment requires)",
    ...audit.findings.map((finding) => `    - ${finding}`),
  ];
  if (audit.notes.length) lines.push(`  notes (${audit.notes.length})`, ...audit.notes.map((note) => `    - ${note}`));
  return lines;
}

function startLines({ startBlock }: ChainAudit): string[] {
  const created = Object.entries(startBlock.creationBlocks)
    .map(([name, block]) => `${name} ${block ?? "?"}`)
    .join(", ");
  return [
    startBlock.derived
      ? `  events     read from block ${startBlock.readFrom}, the first contract's creation (created at: ${created}; the file says ${startBlock.deploymentFile})`
      : `  events     read from block 0: the node could not say when the contracts were created (the file says ${startBlock.deploymentFile})`,
  ];
}

function codeLines({ code }: ChainAudit): string[] {
  const lines = [`  code against the reviewed build (${code.length})`];
  for (const c of code) {
    const verdict = c.matchesReviewedBuild
      ? "the reviewed build"
      : c.reviewedSize === null
        ? "NOT IN THE REVIEWED BUILD"
        : `NOT the reviewed build (${c.reviewedSize} bytes reviewed; differs from byte ${c.firstDifference})`;
    const reached = c.reachedBy === "deployment file" ? "" : `, reached by ${c.reachedBy}`;
    lines.push(`    ${c.contract.padEnd(16)} ${c.address}  ${c.codeSize} bytes, ${verdict}${reached}`);
    if (c.immutables.length)
      lines.push(`      immutables ${c.immutables.map((i) => `${i.name.split(".").pop()} ${i.value}`).join(", ")}`);
    for (const l of c.libraries) lines.push(`      links ${l.name} at ${l.address}`);
  }
  return lines;
}

function governanceLines({ governance }: ChainAudit): string[] {
  const lines = [`  governance (DEFAULT_ADMIN_ROLE now)`];
  for (const g of governance.governors) {
    const safe = g.safe;
    const what =
      g.kind === "KEY"
        ? "a single key"
        : safe
          ? `a Safe${safe.version ? ` ${safe.version}` : ""}, ${safe.threshold} of ${safe.owners.length} owners (${safe.owners.join(", ")}), ${safe.modules.length ? `modules ${safe.modules.map((m) => `${m.address}${m.isKey ? " (a key)" : ""}`).join(", ")}` : "no module"}`
          : "a contract that is not a Safe";
    lines.push(`    ${g.account}  ${what}  on ${g.contracts.join(", ")}`);
  }
  for (const contract of governance.ungoverned) lines.push(`    nobody on ${contract}`);
  return lines;
}

function licenceLines(l: LicenceAudit, contracts: ChainAudit["contracts"]): string[] {
  // Status changes are made by role holders or by the approval registry itself: name the platform's contracts.
  const who = (address: string) => Object.entries(contracts).find(([, a]) => a === address)?.[0] ?? address;
  const docName = (docIndex: number) =>
    l.documents.find((d) => d.docIndex === docIndex)?.docType || `document #${docIndex}`;
  const lines = [
    `Licence token ${l.tokenId}`,
    `  status     ${l.status}${l.reasonCode ? ` (reason ${l.reasonCode})` : ""}, validity ${l.validity}`,
    `  owner      ${l.owner}`,
    `  applicant commitment ${l.applicantCommitment}`,
    `  minted     ${l.mint.timestamp}  block ${l.mint.blockNumber}  tx ${l.mint.transactionHash}`,
    l.issuance
      ? `  issued     ${l.issuedAt}  block ${l.issuance.blockNumber}  tx ${l.issuance.transactionHash}  expires ${l.expiresAt ?? "never"}`
      : `  issued     no`,
    `  workflow   ${l.workflowId}: review ${l.review.phase} at stage ${l.review.stage} of ${l.review.stageCount}; documents ${l.review.documentPhase}`,
    `  status history (${l.statusHistory.length})`,
    ...l.statusHistory.map(
      (c) =>
        `    ${c.timestamp}  ${c.from} -> ${c.to}${c.reasonCode ? ` (reason ${c.reasonCode})` : ""}  by ${who(c.actor)}  tx ${c.transactionHash}`,
    ),
    `  documents (${l.documents.length})`,
  ];
  for (const d of l.documents) {
    lines.push(`    #${d.docIndex} ${d.docType}  document ${d.documentId}  latest v${d.latestVersion}`);
    for (const v of d.versions)
      lines.push(
        `      v${v.version}  sha256 ${v.sha256}  ${v.isLatest ? "latest    " : "superseded"}  ${v.timestamp}  block ${v.blockNumber}  tx ${v.transactionHash}`,
      );
  }
  lines.push(`  decisions (${l.decisions.length})`);
  for (const d of l.decisions) {
    const reviewed = d.reviewed.length
      ? d.reviewed.map((r) => `${docName(r.docIndex)} v${r.version}`).join(", ")
      : "none";
    const fate = d.invalidatedBy
      ? `INVALIDATED by ${docName(d.invalidatedBy.docIndex)} v${d.invalidatedBy.newVersion}`
      : d.fate;
    lines.push(
      `    stage ${d.stage}  ${d.departmentCode}  ${d.decision}${d.reasonCode ? ` (reason ${d.reasonCode})` : ""}  ${fate}  reviewed ${reviewed}`,
      `      ${d.timestamp}  block ${d.blockNumber}  tx ${d.transactionHash}`,
      `      ${d.signedBy}  signer ${d.signer} ${d.custody} ${d.route === "RELAYED" ? `relayed by ${d.sender}` : `sent by ${d.sender}`}  department wallet ${d.departmentWallet} ${d.departmentCustody ?? ""}  ${d.walletMatches ? "wallet ok" : "WALLET MISMATCH"}`,
    );
    for (const k of d.passkeys ?? [])
      lines.push(
        `      passkey of reviewer ${k.reviewerId}  origin ${k.origin ?? "(none)"}  rpIdHash ${k.rpIdHash}  ${k.verified ? "verified" : "NOT VERIFIED"}`,
      );
  }
  lines.push(`  standing approvals (${l.approvals.length})`);
  for (const a of l.approvals)
    lines.push(`    stage ${a.stage}  ${a.departmentCode}  ${a.approvedAt}  tx ${a.transactionHash}`);
  if (l.issuanceCheck) {
    const c = l.issuanceCheck;
    lines.push(
      `  at issuance: ${c.stagesCompleted.length} of ${l.review.stageCount} stages complete (${c.stagesCompleted.join(", ") || "none"}), issued by ${who(c.issuedBy)}; the standing approvals covered`,
    );
    for (const a of c.approvals) {
      const covered = a.covered
        .map(
          (d) =>
            `${d.docType} v${d.version}${d.version < d.latestAtIssuance ? ` (latest v${d.latestAtIssuance}!)` : ""}`,
        )
        .join(", ");
      lines.push(`    stage ${a.stage}  ${a.departmentCode}  ${covered || "nothing"}  tx ${a.transactionHash}`);
    }
  }
  lines.push(
    l.findings.length
      ? `  FINDINGS (${l.findings.length})`
      : "  findings: none (events and views agree; every decision came from its department's wallet)",
  );
  for (const finding of l.findings) lines.push(`    - ${finding}`);
  return lines;
}

export function differencesText(baseUrl: string, differences: Difference[]): string {
  if (differences.length === 0) return `Compared with ${baseUrl}: the API agrees with the chain on every field.`;
  const lines = [`Compared with ${baseUrl}: ${differences.length} difference${differences.length === 1 ? "" : "s"}`];
  for (const d of differences) lines.push(`  ${d.subject}  ${d.field}: chain ${show(d.chain)}, API ${show(d.api)}`);
  return lines.join("\n");
}

const show = (value: unknown) => (typeof value === "string" ? value : (JSON.stringify(value) ?? "absent"));
