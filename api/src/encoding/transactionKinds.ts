/**
 * The kinds of transaction the platform signs, as the outbox (`chain_transactions.kind`) records them: shared by
 * the chain gateway, which writes them, and the reads and routes, which filter by them without importing chain/.
 */

/** Every kind at run time: the spec's five first, then ours. */
export const TX_KINDS = [
  "MINT_NFT",
  "APPROVAL",
  "DOC_UPDATE",
  "REJECT",
  "REVOKE",
  "SUBMIT",
  "RESUBMIT",
  "CANCEL",
  "CHANGES_REQUESTED",
  "TIMEOUT",
  "ESCALATION",
  "REGISTER_DEPARTMENT",
  "UPDATE_DEPARTMENT",
  "REGISTER_WORKFLOW",
  "DEACTIVATE_WORKFLOW",
  "ADMIN",
  // A department's passkey account (DepartmentPasskeyAccount): its deployment, and reviewer changes relayed to it.
  "DEPLOY_PASSKEY_ACCOUNT",
  "PASSKEY_REVIEWER_CHANGE",
  // A status list's digests anchored on chain after a change of status of one of its licences.
  "STATUS_LIST_ANCHOR",
  // Takes the nonce of a transaction the node refused while a later one of the same wallet waited for it.
  "NONCE_FILLER",
] as const;

export type TxKind = (typeof TX_KINDS)[number];
