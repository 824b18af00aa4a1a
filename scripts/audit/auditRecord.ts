/**
 * What the auditor establishes, as plain JSON (`--json` prints exactly this) with the API's enum spellings, so that
 * the comparison is of facts rather than spellings. Stages are numbered from 1, as in the API's answers.
 */

import type { ContractCodeAudit } from "./codeAudit.ts";
import type { GovernanceAudit } from "./governanceAudit.ts";
import type { PasskeyAssertionAudit, PasskeyDepartmentAudit } from "./passkeyAudit.ts";
import type { RoleGrantAudit, RoleHolder } from "./roleHistory.ts";
import type { StartBlockAudit } from "./startBlock.ts";
import type { WiringAudit } from "./wiringAudit.ts";

// Enum names by value, generated from the contracts' interfaces into abis/enums.ts (the API's spellings).
export {
  ApprovalRegistryCustodyNames as CUSTODY_NAMES,
  ApprovalRegistryDecisionStatusNames as DECISION_NAMES,
  ApprovalRegistryPhaseNames as REVIEW_PHASE_NAMES,
  DocumentRegistryPhaseNames as DOCUMENT_PHASE_NAMES,
  LicenceTokenStatusNames as STATUS_NAMES,
  LicenceTokenValidityNames as VALIDITY_NAMES,
} from "../../abis/index.ts";

import type {
  ApprovalRegistryCustodyName as CustodyName,
  ApprovalRegistryDecisionStatusName as DecisionName,
  LicenceTokenStatusName as StatusName,
  LicenceTokenValidityName as ValidityName,
} from "../../abis/index.ts";

export type { CustodyName, DecisionName, StatusName, ValidityName };

/** Where a fact was written: the transaction, its block and the block's time (ISO 8601). */
export type ChainRef = { transactionHash: string; blockNumber: number; timestamp: string };

/** `actor`: the role holder (or the approval registry) that made the change. */
export type StatusChange = ChainRef & { from: StatusName; to: StatusName; reasonCode: number; actor: string };

/** `sha256`: of the file, 0x-prefixed lowercase hex, as anchored; `isLatest`: from `anchorOf(tokenId, sha256)`. */
export type DocumentVersionAudit = ChainRef & { version: number; sha256: string; isLatest: boolean };

/** `documentId`: the platform's (UUID), from the anchored bytes16; `docType`: from the version-1 anchor. */
export type DocumentAudit = {
  documentId: string;
  docIndex: number;
  docType: string;
  latestVersion: number;
  versions: DocumentVersionAudit[];
};

/**
 * What became of a recorded decision: the department's current one in its stage (STANDING), an approval a new
 * document version invalidated (INVALIDATED), replaced by a later decision of the same department in the same
 * stage (SUPERSEDED), or reset to pending by a resubmission, a retried stage or an escalation sent back (CLEARED).
 * CONTRADICTED: it is the department's last decision in its stage, yet `decisionsOf` holds another (a finding).
 */
export type DecisionFate = "STANDING" | "INVALIDATED" | "SUPERSEDED" | "CLEARED" | "CONTRADICTED";

export interface DecisionAudit extends ChainRef {
  stage: number;
  departmentId: number;
  departmentCode: string;
  decision: DecisionName;
  reasonCode: number;
  /** The documents reviewed, with the exact version of each at the time (from the event's packed word). */
  reviewed: { docIndex: number; version: number }[];
  remarksHash: string;
  /** The transaction's sender (the department's wallet, or whoever relayed its signed decision). */
  sender: string;
  /** The event's signer: the department wallet that decided, as the contract recorded it. */
  signer: string;
  /** The event's custody: who held the signer's key, as the contract recorded it. */
  custody: CustodyName;
  /** SENT: a decide call made by the wallet itself (its own transaction, or a Safe's call); RELAYED: decideBySig,
   * whose signature the auditor checked again (ECDSA recovery, or the wallet's EIP-1271 answer); UNKNOWN: the call
   * that made it could not be found (a finding). */
  route: "SENT" | "RELAYED" | "UNKNOWN";
  /** Who held the key that decided, from the department's custody at that block: "platform-signed" (CUSTODIAL:
   * the platform held the key, so the chain proves only that the platform signed) or "department-signed"
   * (DEPARTMENT_HELD). */
  signedBy: "platform-signed" | "department-signed";
  /** The department's wallet and custody at that point of the chain (replayed from its wallet events). */
  departmentWallet: string;
  departmentCustody: CustodyName | null;
  /** The signer is the department's wallet of the time, with its custody, reached by a route that proves it. */
  walletMatches: boolean;
  fate: DecisionFate;
  /** A decision signed by a passkey account: each reviewer's assertion as the auditor verified it (passkeyAudit.ts). */
  passkeys?: PasskeyAssertionAudit[];
  /** For an INVALIDATED approval: the document version that invalidated it. */
  invalidatedBy?: { docIndex: number; newVersion: number; transactionHash: string; blockNumber: number };
}

/** An approval standing now, as the API's verify answer lists it: its department's latest Approved decision there. */
export type StandingApproval = { stage: number; departmentCode: string; approvedAt: string; transactionHash: string };

/** What an issued licence's standing approvals covered, against the documents' latest versions at issuance. */
export interface IssuanceCheck {
  /** Stages completed (StageCompleted, net of reopenings) when the licence was issued. */
  stagesCompleted: number[];
  /** Who issued it: LicenceStatusChanged(Submitted -> Approved).actor, which must be the approval registry. */
  issuedBy: string;
  approvals: {
    stage: number;
    departmentCode: string;
    transactionHash: string;
    covered: { docIndex: number; docType: string; version: number; latestAtIssuance: number }[];
  }[];
}

export interface LicenceAudit {
  tokenId: number;
  owner: string;
  /** keccak256(salt ‖ applicant id) from LicenceMinted: the holder proves the licence is theirs with the salt. */
  applicantCommitment: string;
  status: StatusName;
  validity: ValidityName;
  reasonCode: number;
  workflowId: number;
  issuedAt: string | null;
  expiresAt: string | null;
  mint: ChainRef;
  issuance: ChainRef | null;
  statusHistory: StatusChange[];
  review: { phase: string; stage: number; maxStage: number; stageCount: number; documentPhase: string };
  documents: DocumentAudit[];
  decisions: DecisionAudit[];
  approvals: StandingApproval[];
  /** For an issued licence: the stages complete and the versions its standing approvals covered. */
  issuanceCheck: IssuanceCheck | null;
  /** Contradictions found on chain alone (events against views, senders against department wallets). Empty when sound. */
  findings: string[];
}

/** One department wallet event, as replayed. */
export interface WalletChangeAudit {
  kind: "REGISTERED" | "PROPOSED" | "CANCELLED" | "ROTATED";
  /** The wallet registered, proposed, whose proposal was cancelled, or that took over. */
  wallet: string;
  custody?: CustodyName;
  transactionHash: string;
  blockNumber: number;
  timestamp: string;
  /** PROPOSED: from when it can be activated; replacedBy: a later proposal replaced it before activation. */
  effectiveAt?: string;
  replacedBy?: string;
  /** CANCELLED: who cancelled. */
  by?: string;
  /** ROTATED: the wallet replaced, when the activated proposal was made, and the seconds waited since. */
  previousWallet?: string;
  proposedAt?: string | null;
  waitedSeconds?: number | null;
  delayRespected?: boolean;
  /** ROTATED: the outgoing wallet consented to the change (DepartmentWalletConsented for its proposal). */
  consented?: boolean;
}

export type DepartmentAudit = {
  departmentId: number;
  code: string;
  wallet: string;
  custody: CustodyName;
  changes: WalletChangeAudit[];
};

export interface ChainAudit {
  chainId: number;
  contracts: { LicenceToken: string; DocumentRegistry: string; ApprovalRegistry: string; DecisionVerifier: string };
  /** The keys the deployment file names for each role, and the department wallet delay. */
  deployment: {
    roles: { governance: string; admin: string; operator: string; keeper: string };
    walletDelay: number;
    deployer: string | null;
  };
  /** Every log and view was read at this block, so the audit is one consistent snapshot. */
  asOfBlock: number;
  asOfTime: string;
  /** Where events were read from: the contracts' creation blocks found on chain, against the deployment file's. */
  startBlock: StartBlockAudit;
  /** The runtime code at each address against the reviewed build (abis/build.json). */
  code: ContractCodeAudit[];
  /** Who holds DEFAULT_ADMIN_ROLE now, and what each holder is (a key, a Safe with its owners and threshold). */
  governance: GovernanceAudit;
  /** Role holders now, and every grant since the deployment (RoleGranted / RoleRevoked). */
  roles: { holders: RoleHolder[]; grants: RoleGrantAudit[] };
  /** The contracts' wiring as the chain holds it; null when the audit stopped at code that is not the reviewed build. */
  wiring: WiringAudit | null;
  departments: DepartmentAudit[];
  /** Every department wallet that is a passkey account: its reviewers and threshold now, and their history. */
  passkeyDepartments: PasskeyDepartmentAudit[];
  /** Platform-wide findings (roles, wiring, wallet changes); each licence has its own. Empty when sound. */
  findings: string[];
  /** What an auditor should know that is not a finding (the development chain's single key, a node without history). */
  notes: string[];
  licences: LicenceAudit[];
  /** Every status list in use: its digests rebuilt from the licences' statuses against its latest anchor. */
  statusLists: StatusListAudit[];
}

/** One status list: its issued licences' statuses at the audited block, their digests, and the list's latest anchor. */
export interface StatusListAudit {
  list: number;
  /** Issued licences whose token ids fall in the list. */
  issued: number;
  suspended: number[];
  revoked: number[];
  /** SHA-256 of each decoded list, rebuilt by the auditor. */
  digests: { revocation: string; suspension: string; tokenStatus: string };
  anchor: (ChainRef & { sequence: number; revocation: string; suspension: string; tokenStatus: string }) | null;
  /** The anchor holds the rebuilt digests. */
  matches: boolean;
}

/** Seconds since the epoch (chain time) as ISO 8601. */
export const isoTime = (seconds: number | bigint) => new Date(Number(seconds) * 1000).toISOString();
