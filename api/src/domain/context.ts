/**
 * What use cases need: storage, the chain gateway, the operator wallet, the contracts, the stores, and the
 * chain-side services that hold keys for them. No Koa, no keys here.
 */
import type { Logger } from "pino";
import type { Config } from "../config.ts";
import type { ChainGateway } from "../chain/chainGateway.ts";
import type { CredentialSigner } from "../chain/credentialKey.ts";
import type { Deployment } from "../chain/deployment.ts";
import type { DepartmentWallets } from "../chain/departmentWallets.ts";
import type { GovernanceKey } from "../chain/governanceKey.ts";
import type { SecretSealer } from "../chain/secretSealer.ts";
import type { DbPool } from "../db/queryable.ts";
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
  /**
   * The governance key (DEFAULT_ADMIN_ROLE: registers departments, their wallet changes and workflow versions), only
   * where one key governs (the development chain's deployer). Undefined: governance (a Safe) executes those itself.
   */
  governance?: GovernanceKey;
  contracts: Deployment["contracts"];
  workflows: WorkflowStore;
  documentStore: DocumentStore;
  logger: Logger;
  /** The custodial address of an applicant's licence, one per request (chain/applicantKeys.ts, custody secret). */
  applicantAddress(applicantId: string, requestId: string): string;
  /** Custodial department wallets, made or chosen by the configured signer (key vault or remote signer). */
  departmentWallets: DepartmentWallets;
  /** Seals department API secrets at rest (they are needed back to verify signed requests). */
  departmentSecrets: SecretSealer;
  /** Seals webhook secrets at rest (they are needed back to sign deliveries). */
  webhookSecrets: SecretSealer;
  /**
   * A key that changes whenever the chain's head (seen at most 250 ms late) or the index moves: a read made of the
   * two is reused while it stays the same. Undefined when a change could go unseen (not listening to the indexer).
   */
  chainState?: () => Promise<string | undefined>;
  /** Signs licence credentials and status lists (ES256): the did:web issuer's key, sealed in the key vault. */
  credentialSigner: CredentialSigner;
}
