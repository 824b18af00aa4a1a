/**
 * Tables the indexer writes (one Postgres schema per build; the API reads them through the views schema).
 * TypeScript keys are camelCase; Ponder maps them to snake_case SQL columns (tokenId -> token_id).
 * Conventions: times are unix seconds (block timestamps) in SQL bigint; addresses and hashes are lower-case 0x
 * hex text; enum values are upper-case names; uint256 values that can exceed bigint are decimal text.
 */
import { index, onchainTable, primaryKey } from "ponder";

export const licences = onchainTable(
  "licences",
  (t) => ({
    tokenId: t.int8({ mode: "bigint" }).primaryKey(),
    owner: t.hex().notNull(),
    workflowId: t.integer().notNull(),
    /** keccak256(salt ‖ applicant id) recorded at mint (LicenceMinted); zero when none */
    applicantCommitment: t.hex().notNull(),
    /** DRAFT SUBMITTED PENDING_RESUBMISSION APPROVED REJECTED CANCELLED SUSPENDED REVOKED */
    status: t.text().notNull(),
    /** reason of the last rejection, cancellation, suspension or revocation (0: none) */
    reasonCode: t.integer().notNull(),
    /** null until issued */
    issuedAt: t.int8({ mode: "bigint" }),
    /** null until issued; 0 = issued without expiry */
    expiresAt: t.int8({ mode: "bigint" }),
    createdBlock: t.int8({ mode: "bigint" }).notNull(),
    createdTx: t.hex().notNull(),
    createdAt: t.int8({ mode: "bigint" }).notNull(),
    updatedBlock: t.int8({ mode: "bigint" }).notNull(),
    updatedAt: t.int8({ mode: "bigint" }).notNull(),
  }),
  (table) => ({
    statusIdx: index("licences_status_idx").on(table.status),
    ownerIdx: index("licences_owner_idx").on(table.owner),
  }),
);

export const licenceStatusHistory = onchainTable(
  "licence_status_history",
  (t) => ({
    /** `${txHash}-${logIndex}` */
    id: t.text().primaryKey(),
    tokenId: t.int8({ mode: "bigint" }).notNull(),
    fromStatus: t.text().notNull(),
    toStatus: t.text().notNull(),
    reasonCode: t.integer().notNull(),
    actor: t.hex().notNull(),
    blockNumber: t.int8({ mode: "bigint" }).notNull(),
    logIndex: t.integer().notNull(),
    txHash: t.hex().notNull(),
    timestamp: t.int8({ mode: "bigint" }).notNull(),
  }),
  (table) => ({
    tokenIdx: index("licence_status_history_token_idx").on(table.tokenId),
    // The status-list watcher asks for the changes after a block, at every indexed block.
    blockIdx: index("licence_status_history_block_idx").on(table.blockNumber),
  }),
);

/** Every StatusListAnchored: the digests a served status list must hash to, from its block until the next one. */
export const statusListAnchors = onchainTable(
  "status_list_anchors",
  (t) => ({
    /** token id div 131,072 */
    list: t.integer().notNull(),
    /** 1, 2, 3 … per list */
    sequence: t.int8({ mode: "bigint" }).notNull(),
    /** SHA-256 of each decoded list */
    revocation: t.hex().notNull(),
    suspension: t.hex().notNull(),
    tokenStatus: t.hex().notNull(),
    blockNumber: t.int8({ mode: "bigint" }).notNull(),
    txHash: t.hex().notNull(),
    timestamp: t.int8({ mode: "bigint" }).notNull(),
  }),
  (table) => ({ pk: primaryKey({ columns: [table.list, table.sequence] }) }),
);

export const documents = onchainTable(
  "documents",
  (t) => ({
    /** `${tokenId}-${docIndex}` */
    id: t.text().primaryKey(),
    tokenId: t.int8({ mode: "bigint" }).notNull(),
    docIndex: t.integer().notNull(),
    /** UUID 8-4-4-4-12 from the bytes16 */
    documentId: t.text().notNull(),
    /** from version 1 (later versions carry no type) */
    docType: t.text().notNull(),
    latestVersion: t.integer().notNull(),
    latestHash: t.hex().notNull(),
    createdAt: t.int8({ mode: "bigint" }).notNull(),
    updatedAt: t.int8({ mode: "bigint" }).notNull(),
    createdTx: t.hex().notNull(),
    updatedTx: t.hex().notNull(),
  }),
  (table) => ({ tokenIdx: index("documents_token_idx").on(table.tokenId) }),
);

/** Every anchored version: a file may be anchored in several requests, once in each. */
export const documentVersions = onchainTable(
  "document_versions",
  (t) => ({
    sha256Hash: t.hex().notNull(),
    tokenId: t.int8({ mode: "bigint" }).notNull(),
    documentId: t.text().notNull(),
    docIndex: t.integer().notNull(),
    version: t.integer().notNull(),
    blockNumber: t.int8({ mode: "bigint" }).notNull(),
    txHash: t.hex().notNull(),
    timestamp: t.int8({ mode: "bigint" }).notNull(),
  }),
  (table) => ({
    pk: primaryKey({ columns: [table.tokenId, table.sha256Hash] }),
    hashIdx: index("document_versions_hash_idx").on(table.sha256Hash),
  }),
);

export const departments = onchainTable("departments", (t) => ({
  departmentId: t.integer().primaryKey(),
  code: t.text().notNull(),
  wallet: t.hex().notNull(),
  /** CUSTODIAL | DEPARTMENT_HELD: who holds the wallet's key */
  custody: t.text().notNull(),
  active: t.boolean().notNull(),
  /** a proposed wallet change (DepartmentWalletProposed), until activated or cancelled */
  pendingWallet: t.hex(),
  pendingCustody: t.text(),
  pendingEffectiveAt: t.int8({ mode: "bigint" }),
  /** the current wallet consented to the pending change (DepartmentWalletConsented): it can be activated at once */
  pendingConsented: t.boolean(),
  registeredAt: t.int8({ mode: "bigint" }).notNull(),
  updatedAt: t.int8({ mode: "bigint" }).notNull(),
}));

export const departmentWallets = onchainTable(
  "department_wallets",
  (t) => ({
    /** `${txHash}-${logIndex}` of DepartmentRegistered / DepartmentWalletRotated */
    id: t.text().primaryKey(),
    departmentId: t.integer().notNull(),
    wallet: t.hex().notNull(),
    /** CUSTODIAL | DEPARTMENT_HELD */
    custody: t.text().notNull(),
    fromBlock: t.int8({ mode: "bigint" }).notNull(),
    txHash: t.hex().notNull(),
    timestamp: t.int8({ mode: "bigint" }).notNull(),
  }),
  (table) => ({ departmentIdx: index("department_wallets_department_idx").on(table.departmentId) }),
);

export const workflows = onchainTable("workflows", (t) => ({
  workflowId: t.integer().primaryKey(),
  workflowType: t.text().notNull(),
  version: t.integer().notNull(),
  definitionHash: t.hex().notNull(),
  stageCount: t.integer().notNull(),
  validitySeconds: t.int8({ mode: "bigint" }).notNull(),
  active: t.boolean().notNull(),
  createdAt: t.int8({ mode: "bigint" }).notNull(),
  deactivatedAt: t.int8({ mode: "bigint" }),
  txHash: t.hex().notNull(),
}));

export const workflowStages = onchainTable(
  "workflow_stages",
  (t) => ({
    /** `${workflowId}-${stageIndex}` */
    id: t.text().primaryKey(),
    workflowId: t.integer().notNull(),
    stageIndex: t.integer().notNull(),
    /** SEQUENTIAL | PARALLEL */
    executionType: t.text().notNull(),
    /** ALL | ANY | THRESHOLD */
    completion: t.text().notNull(),
    threshold: t.integer().notNull(),
    /** NONE | NOTIFY | ESCALATE | AUTO_REJECT */
    onTimeout: t.text().notNull(),
    /** FAIL_REQUEST | RETRY_STAGE | ESCALATE */
    onRejection: t.text().notNull(),
    timeoutSeconds: t.int8({ mode: "bigint" }).notNull(),
    mandatoryMask: t.integer().notNull(),
    /** in listed (SEQUENTIAL turn) order */
    departmentIds: t.integer().array().notNull(),
  }),
  (table) => ({ workflowIdx: index("workflow_stages_workflow_idx").on(table.workflowId) }),
);

export const requestProgress = onchainTable("request_progress", (t) => ({
  tokenId: t.int8({ mode: "bigint" }).primaryKey(),
  workflowId: t.integer().notNull(),
  stage: t.integer().notNull(),
  /** NOT_STARTED | IN_REVIEW | AWAITING_RESUBMISSION | ESCALATED | CLOSED */
  phase: t.text().notNull(),
  stageStartedAt: t.int8({ mode: "bigint" }).notNull(),
  /** first ReviewStarted */
  submittedAt: t.int8({ mode: "bigint" }).notNull(),
  /** an escalation is open (StageEscalated not yet followed by EscalationResolved) */
  escalated: t.boolean().notNull(),
  /**
   * The department ids of the request's pending_departments rows and the stage they were written for: handlers
   * update those rows from this instead of querying them (raw SQL in a handler makes Ponder flush its cache).
   */
  pendingDepartmentIds: t.integer().array().notNull(),
  pendingStage: t.integer().notNull(),
  updatedAt: t.int8({ mode: "bigint" }).notNull(),
}));

/**
 * Departments that can decide on a request now: the contract's pendingDepartmentsOf at the block of the request's
 * latest review event (read, not recomputed, so the SEQUENTIAL turn rule lives in the contract alone).
 */
export const pendingDepartments = onchainTable(
  "pending_departments",
  (t) => ({
    /** `${tokenId}-${departmentId}` */
    id: t.text().primaryKey(),
    tokenId: t.int8({ mode: "bigint" }).notNull(),
    departmentId: t.integer().notNull(),
    stage: t.integer().notNull(),
    /** the block from which the department has been pending */
    sinceBlock: t.int8({ mode: "bigint" }).notNull(),
  }),
  (table) => ({
    tokenIdx: index("pending_departments_token_idx").on(table.tokenId),
    departmentIdx: index("pending_departments_department_idx").on(table.departmentId),
  }),
);

export const stageEvents = onchainTable(
  "stage_events",
  (t) => ({
    /** `${txHash}-${logIndex}` */
    id: t.text().primaryKey(),
    tokenId: t.int8({ mode: "bigint" }).notNull(),
    stage: t.integer().notNull(),
    /** the event name: ReviewStarted, StageStarted, DecisionRecorded, ... */
    eventType: t.text().notNull(),
    detail: t.jsonb().notNull(),
    blockNumber: t.int8({ mode: "bigint" }).notNull(),
    logIndex: t.integer().notNull(),
    txHash: t.hex().notNull(),
    timestamp: t.int8({ mode: "bigint" }).notNull(),
  }),
  (table) => ({ tokenIdx: index("stage_events_token_idx").on(table.tokenId) }),
);

export const approvals = onchainTable(
  "approvals",
  (t) => ({
    /** `${txHash}-${logIndex}` of DecisionRecorded */
    id: t.text().primaryKey(),
    tokenId: t.int8({ mode: "bigint" }).notNull(),
    departmentId: t.integer().notNull(),
    stage: t.integer().notNull(),
    /** APPROVED | REJECTED | CHANGES_REQUESTED */
    decision: t.text().notNull(),
    /** the decision as it stands: the decision, or REVIEW_REQUIRED once a document update invalidated it */
    status: t.text().notNull(),
    reasonCode: t.integer().notNull(),
    reviewedMask: t.integer().notNull(),
    /** the document registry's packed word (uint256) as decimal text */
    documentVersions: t.text().notNull(),
    remarksHash: t.hex().notNull(),
    /** the department wallet that decided (transaction sender, or EIP-712 signer of a relayed decision) */
    signer: t.hex().notNull(),
    /** CUSTODIAL | DEPARTMENT_HELD, as registered when it decided */
    custody: t.text().notNull(),
    isActive: t.boolean().notNull(),
    invalidatedAt: t.int8({ mode: "bigint" }),
    /** DOCUMENT_UPDATED (ReviewInvalidated), or the DecisionsReset cause as the contract names it (ResetCause):
     * RESUBMITTED | ESCALATION_RETURNED | STAGE_RETRIED | STAGE_REOPENED */
    invalidationReason: t.text(),
    invalidationTx: t.hex(),
    /** DOCUMENT_UPDATED only: the document and its new version */
    invalidatedDocIndex: t.integer(),
    invalidatedVersion: t.integer(),
    blockNumber: t.int8({ mode: "bigint" }).notNull(),
    logIndex: t.integer().notNull(),
    txHash: t.hex().notNull(),
    timestamp: t.int8({ mode: "bigint" }).notNull(),
  }),
  (table) => ({
    tokenIdx: index("approvals_token_idx").on(table.tokenId),
    departmentActiveIdx: index("approvals_department_active_idx").on(table.departmentId, table.isActive),
  }),
);

export const transactions = onchainTable(
  "transactions",
  (t) => ({
    hash: t.hex().primaryKey(),
    blockNumber: t.int8({ mode: "bigint" }).notNull(),
    blockHash: t.hex().notNull(),
    txIndex: t.integer().notNull(),
    timestamp: t.int8({ mode: "bigint" }).notNull(),
    from: t.hex().notNull(),
    /** null for a contract creation */
    to: t.hex(),
    gasUsed: t.int8({ mode: "bigint" }).notNull(),
    /** from the first of our events in the transaction that names one (OTHER when none does) */
    kind: t.text().notNull(),
  }),
  (table) => ({ kindIdx: index("transactions_kind_idx").on(table.kind) }),
);

export const roleGrants = onchainTable("role_grants", (t) => ({
  /** `${contract}-${role}-${account}` */
  id: t.text().primaryKey(),
  /** LicenceToken | DocumentRegistry | ApprovalRegistry */
  contract: t.text().notNull(),
  role: t.hex().notNull(),
  /** ADMIN_ROLE, OPERATOR_ROLE, ... (the hash when unknown) */
  roleName: t.text().notNull(),
  account: t.hex().notNull(),
  granted: t.boolean().notNull(),
  updatedBlock: t.int8({ mode: "bigint" }).notNull(),
  updatedTx: t.hex().notNull(),
}));

export const contractEvents = onchainTable(
  "contract_events",
  (t) => ({
    /** `${txHash}-${logIndex}` */
    id: t.text().primaryKey(),
    contract: t.text().notNull(),
    eventName: t.text().notNull(),
    /** decoded arguments by name; bigints as decimal strings, hex lower case */
    args: t.jsonb().notNull(),
    blockNumber: t.int8({ mode: "bigint" }).notNull(),
    txHash: t.hex().notNull(),
    logIndex: t.integer().notNull(),
    timestamp: t.int8({ mode: "bigint" }).notNull(),
  }),
  (table) => ({
    txIdx: index("contract_events_tx_idx").on(table.txHash),
    nameIdx: index("contract_events_name_idx").on(table.contract, table.eventName),
  }),
);
