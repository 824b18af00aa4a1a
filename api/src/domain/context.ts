/** What use cases need: storage, the chain gateway, the operator wallet, the contracts, the stores. No Koa here. */
import type { DbPool } from "../db/queryable.ts";
import type { Logger } from "pino";
import type { Config } from "../config.ts";
import type { ChainGateway } from "../chain/chainGateway.ts";
import type { Deployment } from "../chain/deployment.ts";
import type { DocumentStore } from "../storage/index.ts";
import type { WorkflowStore } from "../stores/workflowStore.ts";

export interface DomainContext {
  config: Config;
  pool: DbPool;
  gateway: ChainGateway;
  /** The operator wallet (OPERATOR_ROLE, KEEPER_ROLE): mints, anchors, submits, cancels, enforces timeouts. */
  operator: string;
  /** The administration wallet (ADMIN_ROLE): departments, workflows, escalations, suspensions. Never the operator. */
  administrator: string;
  contracts: Deployment["contracts"];
  workflows: WorkflowStore;
  documentStore: DocumentStore;
  logger: Logger;
  /** Custody secret deriving applicants' addresses. */
  custodySecret: string;
  /** Custodial wallets (departments get theirs at registration). */
  wallets: import("../chain/walletStore.ts").WalletStore;
  /** Holds the wallets' keys (key vault or remote signer): departments' wallets are created or chosen through it. */
  signer: import("../chain/transactionSigner.ts").TransactionSigner;
  /** Encrypts department API secrets at rest (they are needed to verify signed requests). */
  vault: import("../chain/keyVault.ts").KeyVault;
}
