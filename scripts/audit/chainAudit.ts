/**
 * The audit itself, at one block. The code comes first: if it is not the reviewed build the audit stops there, since
 * nothing read through it would prove anything. Wherever the chain says a thing twice (an event and a view) both are
 * read and any contradiction becomes a finding.
 */
import { ZeroAddress, getAddress, keccak256, type JsonRpcProvider } from "ethers";
import { stageNumber } from "../../abis/index.ts";
import {
  CUSTODY_NAMES,
  DOCUMENT_PHASE_NAMES,
  REVIEW_PHASE_NAMES,
  STATUS_NAMES,
  VALIDITY_NAMES,
  isoTime,
  type ChainAudit,
  type ChainRef,
  type LicenceAudit,
  type StatusChange,
} from "./auditRecord.ts";
import { ContractViews, stageRuleOf } from "./contractViews.ts";
import { auditCode } from "./codeAudit.ts";
import { auditDecisions, readStageLedgers, type DecisionContext } from "./decisionAudit.ts";
import { DepartmentWallets } from "./departmentWallets.ts";
import type { Deployment } from "./deploymentFile.ts";
import { auditDocuments } from "./documentAudit.ts";
import { auditGovernance, governanceFindings } from "./governanceAudit.ts";
import { auditIssuance } from "./issuanceAudit.ts";
import { PasskeyAccounts, expectedOrigin, type PasskeyDepartmentAudit } from "./passkeyAudit.ts";
import { readReviewedBuild, type ReviewedBuild } from "./reviewedBuild.ts";
import { RoleHistory } from "./roleHistory.ts";
import { readWiring, wiringFindings } from "./wiringAudit.ts";
import { LogReader, type ChainEvent } from "./logReader.ts";
import { auditStartBlock, startBlockFindings } from "./startBlock.ts";
import { auditStatusLists, statusListOf } from "./statusListAudit.ts";
import { TransactionLookups } from "./transactionLookups.ts";

export type AuditTarget = { tokenId: number } | "all";

export async function auditChain(
  provider: JsonRpcProvider,
  deployment: Deployment,
  target: AuditTarget,
  options: { chunkBlocks: number; build?: ReviewedBuild; expectOrigin?: string },
): Promise<ChainAudit> {
  await checkEndpoint(provider, deployment);
  // Pinned before anything is read: later blocks cannot make logs and views disagree.
  const head = await provider.getBlock("latest");
  if (!head) throw new Error("the node returned no latest block");
  const asOfBlock = head.number;
  const facts = {
    chainId: deployment.chainId,
    contracts: deployment.contracts,
    deployment: { roles: deployment.roles, walletDelay: deployment.walletDelay, deployer: deployment.deployer ?? null },
    asOfBlock,
    asOfTime: isoTime(head.timestamp),
  };

  // The code first: every view and event below is read through it.
  const code = await auditCode(provider, deployment, options.build ?? (await readReviewedBuild()), asOfBlock);
  const { startBlock, notes } = await auditStartBlock(provider, deployment, asOfBlock);
  const untrusted = code.code.filter(
    (c) => c.reachedBy === "deployment file" && c.contract in deployment.contracts && !c.matchesReviewedBuild,
  );
  if (untrusted.length)
    return stoppedAtCode({ ...facts, startBlock, code: code.code }, code.findings, notes, untrusted);

  const views = new ContractViews(provider, deployment.contracts, asOfBlock);
  if (target !== "all" && Number((await views.call("LicenceToken", "validityOf", target.tokenId))[0]) === 0)
    throw new Error(`token ${target.tokenId} does not exist on chain (validityOf is UNKNOWN at block ${asOfBlock})`);
  const reader = new LogReader({
    provider,
    deployment: { ...deployment, startBlock: startBlock.readFrom },
    toBlock: asOfBlock,
    chunkBlocks: options.chunkBlocks,
  });
  const lookups = new TransactionLookups(provider);
  const passkeys = new PasskeyAccounts(
    provider,
    reader,
    asOfBlock,
    options.expectOrigin ? expectedOrigin(options.expectOrigin) : undefined,
  );
  const platform = await auditPlatform(provider, deployment, views, reader, { lookups, passkeys }, asOfBlock);
  const startFindings = startBlockFindings(startBlock, platform.firstEvent);
  const passkeyDepartments = await auditPasskeyDepartments(platform.departments, passkeys);
  const context = {
    chainId: deployment.chainId,
    approvalRegistry: deployment.contracts.ApprovalRegistry,
    lookups,
    passkeys,
  };
  const licences = await auditLicences(target, reader, views, platform, context);
  const lists = await auditStatusLists(
    reader,
    views,
    asOfBlock,
    (block) => lookups.timeOf(block),
    target === "all" ? undefined : statusListOf(target.tokenId),
  );
  return {
    ...facts,
    startBlock,
    code: code.code,
    governance: platform.governance,
    roles: { holders: platform.roles.holders(), grants: platform.roles.grants() },
    wiring: platform.wiring,
    departments: platform.departments.audit(),
    passkeyDepartments: passkeyDepartments.audits,
    findings: [
      ...code.findings,
      ...startFindings,
      ...platform.findings,
      ...passkeyDepartments.findings,
      ...lists.findings,
    ],
    notes: [...notes, ...platform.notes, ...lookups.notes, ...passkeys.notes, ...lists.notes],
    licences,
    statusLists: lists.statusLists,
  };
}

/** The audit of code that is not the reviewed build: the code and the start block, and nothing read through it. */
function stoppedAtCode(
  read: Pick<ChainAudit, "chainId" | "contracts" | "deployment" | "asOfBlock" | "asOfTime" | "startBlock" | "code">,
  findings: string[],
  notes: string[],
  untrusted: { contract: string }[],
): ChainAudit {
  const names = untrusted.map((c) => c.contract).join(", ");
  const stopped = `the audit stopped at the code: ${names} ${untrusted.length === 1 ? "is" : "are"} not the reviewed build, so what its views and events say would prove nothing`;
  const nothing = { governance: { governors: [], ungoverned: [] }, roles: { holders: [], grants: [] }, wiring: null };
  const none = { departments: [], passkeyDepartments: [], licences: [], statusLists: [] };
  return { ...read, ...nothing, ...none, findings, notes: [...notes, stopped] };
}

/** The endpoint serves the deployment's chain, and the token is there: otherwise no audit can be made. */
async function checkEndpoint(provider: JsonRpcProvider, deployment: Deployment): Promise<void> {
  const network = await provider.getNetwork();
  if (Number(network.chainId) !== deployment.chainId) {
    throw new Error(
      `the RPC endpoint serves chain ${network.chainId} but the deployment file is for chain ${deployment.chainId}`,
    );
  }
  if ((await provider.getCode(deployment.contracts.LicenceToken)) === "0x")
    throw new Error(
      `no contract at LicenceToken ${deployment.contracts.LicenceToken} on chain ${deployment.chainId}: wrong deployment file?`,
    );
}

/**
 * The platform as a whole: governance, roles, wiring, department wallets. Each licence's trust rests on them, so
 * they are checked whichever licences are audited.
 */
async function auditPlatform(
  provider: JsonRpcProvider,
  deployment: Deployment,
  views: ContractViews,
  reader: LogReader,
  { lookups, passkeys }: { lookups: TransactionLookups; passkeys: PasskeyAccounts },
  asOfBlock: number,
) {
  const platformEvents = await lookups.timed(await reader.platformEvents());
  const roles = new RoleHistory(platformEvents, deployment);
  const departments = new DepartmentWallets(platformEvents, deployment.walletDelay, roles);
  const wiring = await readWiring(views, platformEvents);
  const governance = await auditGovernance(provider, deployment, roles.holders(), asOfBlock);
  const governed = governanceFindings(deployment.chainId, governance.governance);
  const findings = [
    ...governance.findings,
    ...governed.findings,
    ...wiringFindings(wiring, deployment),
    ...roles.findings(departments.tenures()),
    ...departments.findings,
    ...(await departments.callerFindings(lookups, roles, passkeys)),
    ...(await departmentRecordFindings(views, departments)),
  ];
  return {
    roles,
    departments,
    wiring,
    governance: governance.governance,
    findings,
    notes: governed.notes,
    firstEvent: platformEvents[0],
  };
}

/**
 * Every wallet any department has had that answers as a passkey account: its reviewers now, their history from
 * its events, and whether its events, its answers and its code agree.
 */
async function auditPasskeyDepartments(
  departments: DepartmentWallets,
  passkeys: PasskeyAccounts,
): Promise<{ audits: PasskeyDepartmentAudit[]; findings: string[] }> {
  const audits: PasskeyDepartmentAudit[] = [];
  const findings: string[] = [];
  for (const department of departments.audit()) {
    for (const wallet of new Set(
      department.changes.filter((c) => c.kind === "REGISTERED" || c.kind === "ROTATED").map((c) => c.wallet),
    )) {
      const account = await passkeys.account(wallet);
      if (!account) continue;
      findings.push(...account.findings(department.code));
      audits.push({
        departmentCode: department.code,
        account: account.address,
        reviewedCode: account.reviewedCode,
        reviewers: account.reviewersNow.map((key) => keccak256(key)),
        threshold: account.thresholdNow,
        history: account.history(),
        keyProofs: account.keyProofs.filter((proof) => proof.departmentCode === department.code),
      });
    }
  }
  return { audits, findings };
}

/** One licence, or every licence minted, each from its own events and the views. */
async function auditLicences(
  target: AuditTarget,
  reader: LogReader,
  views: ContractViews,
  platform: { departments: DepartmentWallets; roles: RoleHistory },
  context: DecisionContext & { lookups: TransactionLookups },
): Promise<LicenceAudit[]> {
  const events = await reader.licenceEvents(target === "all" ? undefined : target.tokenId);
  const byToken = new Map<number, ChainEvent[]>();
  for (const event of events) {
    const tokenId = Number(event.args.tokenId);
    byToken.set(tokenId, [...(byToken.get(tokenId) ?? []), event]);
  }
  const tokenIds =
    target === "all"
      ? events.filter((e) => e.name === "LicenceMinted").map((e) => Number(e.args.tokenId))
      : [target.tokenId];
  const licences: LicenceAudit[] = [];
  for (const tokenId of tokenIds)
    licences.push(await auditLicence(tokenId, byToken.get(tokenId) ?? [], views, platform, context));
  return licences;
}

/** One licence from its events and the views at the audited block: its own facts, documents, decisions, issuance. */
async function auditLicence(
  tokenId: number,
  events: ChainEvent[],
  views: ContractViews,
  { departments, roles }: { departments: DepartmentWallets; roles: RoleHistory },
  context: DecisionContext & { lookups: TransactionLookups },
): Promise<LicenceAudit> {
  const { lookups } = context;
  const findings: string[] = [];
  const ref = async (event: ChainEvent): Promise<ChainRef> => ({
    transactionHash: event.transactionHash,
    blockNumber: event.blockNumber,
    timestamp: await lookups.timeOf(event.blockNumber),
  });
  const named = (name: string) => events.filter((e) => e.name === name);

  const [validity] = await views.call("LicenceToken", "validityOf", tokenId);
  const [record] = await views.call("LicenceToken", "licence", tokenId);
  const [status, reasonCode, workflowId, expiresAt] = [
    record.status,
    record.reasonCode,
    record.workflowId,
    record.expiresAt,
  ].map(Number);
  const owner = record.owner as string;
  const minted = theMint(tokenId, named("LicenceMinted"));
  findings.push(...ownershipFindings(tokenId, minted, named("Transfer"), owner));
  const statusHistory: StatusChange[] = await Promise.all(
    named("LicenceStatusChanged").map(async (e) => ({
      from: STATUS_NAMES[Number(e.args.from)],
      to: STATUS_NAMES[Number(e.args.to)],
      reasonCode: Number(e.args.reasonCode),
      actor: getAddress(e.args.actor),
      ...(await ref(e)),
    })),
  );
  const issued = named("LicenceIssued").at(-1);
  findings.push(...licenceStateFindings(tokenId, { status, expiresAt }, statusHistory, issued));

  const { documents, documentPhase } = await auditDocuments(tokenId, events, views, lookups, findings);
  const [progress] = await views.call("ApprovalRegistry", "progressOf", tokenId);
  const stageCount = Number((await views.call("ApprovalRegistry", "workflow", workflowId))[0].stageCount);
  const ledgers = await readStageLedgers(views, tokenId, stageCount, Number(progress.phase) !== 0);
  const { decisions, approvals } = await auditDecisions(events, ledgers, departments, context, findings);
  const stageRules = await Promise.all(
    Array.from({ length: stageCount }, async (_, s) =>
      stageRuleOf((await views.call("ApprovalRegistry", "stage", workflowId, s))[0]),
    ),
  );
  const issuanceCheck = auditIssuance(
    events,
    decisions,
    documents,
    stageRules,
    context.approvalRegistry,
    roles,
    findings,
  );

  return {
    tokenId,
    owner,
    applicantCommitment: String(minted.args.applicantCommitment).toLowerCase(),
    status: STATUS_NAMES[status],
    validity: VALIDITY_NAMES[Number(validity)],
    reasonCode,
    workflowId,
    issuedAt: issued ? isoTime(issued.args.issuedAt) : null,
    expiresAt: expiresAt === 0 ? null : isoTime(expiresAt),
    mint: await ref(minted),
    issuance: issued ? await ref(issued) : null,
    statusHistory,
    review: {
      phase: REVIEW_PHASE_NAMES[Number(progress.phase)],
      stage: stageNumber(progress.stage),
      maxStage: stageNumber(progress.maxStage),
      stageCount,
      documentPhase: DOCUMENT_PHASE_NAMES[documentPhase],
    },
    documents,
    decisions,
    approvals,
    issuanceCheck,
    findings,
  };
}

/** The token's one LicenceMinted event; any other count means the events were not read from the deployment on. */
function theMint(tokenId: number, minted: ChainEvent[]): ChainEvent {
  if (minted.length !== 1)
    throw new Error(
      `token ${tokenId} exists but has ${minted.length} LicenceMinted events between the contracts' creation and the audited block`,
    );
  return minted[0];
}

/** Minted to its owner, and soulbound: the mint is the only transfer there can be. */
function ownershipFindings(tokenId: number, minted: ChainEvent, transfers: ChainEvent[], owner: string): string[] {
  const findings: string[] = [];
  if (getAddress(minted.args.owner) !== owner)
    findings.push(`licence(${tokenId}).owner is ${owner} but it was minted to ${minted.args.owner}`);
  if (transfers.length !== 1 || getAddress(transfers[0].args.to) !== owner) {
    findings.push(`token ${tokenId} has ${transfers.length} Transfer events (expected one: the mint to ${owner})`);
  }
  return findings;
}

/** The status and expiry the token holds must be where its events end. */
function licenceStateFindings(
  tokenId: number,
  licence: { status: number; expiresAt: number },
  statusHistory: StatusChange[],
  issued: ChainEvent | undefined,
): string[] {
  const findings: string[] = [];
  const replayed = statusHistory.at(-1)?.to ?? "DRAFT";
  if (replayed !== STATUS_NAMES[licence.status])
    findings.push(
      `licence(${tokenId}).status is ${STATUS_NAMES[licence.status]} but its LicenceStatusChanged events end at ${replayed}`,
    );
  if (issued && Number(issued.args.expiresAt) !== licence.expiresAt)
    findings.push(
      `licence(${tokenId}).expiresAt is ${licence.expiresAt} but LicenceIssued set ${issued.args.expiresAt}`,
    );
  return findings;
}

/** The wallet history replayed from events must end at what `departmentRecord` holds now (wallet, custody, pending change). */
async function departmentRecordFindings(views: ContractViews, departments: DepartmentWallets): Promise<string[]> {
  const findings: string[] = [];
  for (const id of departments.ids()) {
    const [{ wallet, custody, pendingWallet }] = await views.call("ApprovalRegistry", "departmentRecord", id);
    const [replayed, code] = [departments.latest(id)!, departments.codeOf(id)];
    const pending = getAddress(pendingWallet) === ZeroAddress ? null : getAddress(pendingWallet);
    const named = CUSTODY_NAMES[Number(custody)];
    if (getAddress(wallet) !== replayed.wallet)
      findings.push(
        `departmentRecord(${id}).wallet is ${getAddress(wallet)} but ${code}'s wallet events end at ${replayed.wallet}`,
      );
    if (named !== replayed.custody)
      findings.push(
        `departmentRecord(${id}).custody is ${named ?? Number(custody)} but ${code}'s wallet events end at ${replayed.custody}`,
      );
    if (pending !== replayed.pending)
      findings.push(
        `departmentRecord(${id}).pendingWallet is ${pending ?? "none"} but ${code}'s wallet events leave ${replayed.pending ?? "none"} pending`,
      );
  }
  return findings;
}
