/**
 * Departments (app.departments): the writes, and departments as readers see them: the off-chain row (name, webhook,
 * signing policy) joined by code with what the chain says (index.departments: on-chain id, wallet, active). A
 * department exists for readers once its registration is confirmed on chain and indexed; `isActive` and
 * `walletAddress` come from the chain.
 */
import { getAddress } from "ethers";
import type { ApprovalRegistryCustodyName } from "../../../abis/index.ts";
import type { Db, Tx } from "../db/queryable.ts";
import { insertRow } from "./insertRow.ts";

export interface StoredDepartment {
  code: string;
  name: string;
  webhookUrl: string | null;
  /** The department's custodial wallet as the chain has it (checksummed). */
  walletAddress: string;
  /** From the chain (index.departments.active). */
  isActive: boolean;
  /** From the chain: who holds the wallet's key. */
  custody: ApprovalRegistryCustodyName;
  /** From the chain: a proposed wallet change waiting out its delay. */
  pendingWalletChange: { walletAddress: string; custody: ApprovalRegistryCustodyName; effectiveAt: Date } | null;
  requireSignedRequests: boolean;
  /** The department's id in the ApprovalRegistry (what index.approvals / workflow_stages store). */
  chainDepartmentId: number;
  createdAt: Date;
  updatedAt: Date;
  keyRotatedAt: Date | null;
}

/** The spec's Department, plus our `requireSignedRequests`. */
export interface DepartmentJson {
  code: string;
  name: string;
  walletAddress: string;
  custody: ApprovalRegistryCustodyName;
  pendingWalletChange: { walletAddress: string; custody: ApprovalRegistryCustodyName; effectiveAt: string } | null;
  webhookUrl: string | null;
  isActive: boolean;
  requireSignedRequests: boolean;
  createdAt: string;
}

const SELECT = `
  SELECT d.code, d.name, d.webhook_url, d.require_signed_requests, d.created_at, d.updated_at, d.key_rotated_at,
         i.department_id, i.wallet, i.active, i.custody, i.pending_wallet, i.pending_custody, i.pending_effective_at,
         i.updated_at AS chain_updated_at
  FROM departments d JOIN index.departments i ON i.code = d.code`;

function toDepartment(row: Record<string, any>): StoredDepartment {
  const chainUpdated = new Date(Number(row.chain_updated_at) * 1000);
  return {
    code: row.code,
    name: row.name,
    webhookUrl: row.webhook_url ?? null,
    walletAddress: getAddress(row.wallet),
    isActive: row.active,
    custody: row.custody,
    pendingWalletChange: row.pending_wallet
      ? {
          walletAddress: getAddress(row.pending_wallet),
          custody: row.pending_custody,
          effectiveAt: new Date(Number(row.pending_effective_at) * 1000),
        }
      : null,
    requireSignedRequests: row.require_signed_requests,
    chainDepartmentId: Number(row.department_id),
    createdAt: row.created_at,
    updatedAt: chainUpdated > row.updated_at ? chainUpdated : row.updated_at,
    keyRotatedAt: row.key_rotated_at ?? null,
  };
}

export class DepartmentStore {
  readonly #pool: Db;

  constructor(pool: Db) {
    this.#pool = pool;
  }

  /** The department with this code, once its registration is indexed; undefined otherwise. */
  async byCode(code: string): Promise<StoredDepartment | undefined> {
    const { rows } = await this.#pool.query(`${SELECT} WHERE d.code = $1`, [code]);
    return rows[0] ? toDepartment(rows[0]) : undefined;
  }

  /** Every visible department (active or not), by code. */
  async list(filter: { isActive?: boolean } = {}): Promise<StoredDepartment[]> {
    const { rows } = await this.#pool.query(
      `${SELECT} ${filter.isActive === undefined ? "" : "WHERE i.active = $1"} ORDER BY d.code`,
      filter.isActive === undefined ? [] : [filter.isActive],
    );
    return rows.map(toDepartment);
  }

  /** The spec's Department body. */
  toJson(department: StoredDepartment): DepartmentJson {
    return departmentJson(department);
  }
}

export function departmentJson(department: StoredDepartment): DepartmentJson {
  return {
    code: department.code,
    name: department.name,
    walletAddress: department.walletAddress,
    custody: department.custody,
    pendingWalletChange: department.pendingWalletChange && {
      ...department.pendingWalletChange,
      effectiveAt: department.pendingWalletChange.effectiveAt.toISOString(),
    },
    webhookUrl: department.webhookUrl,
    isActive: department.isActive,
    requireSignedRequests: department.requireSignedRequests,
    createdAt: department.createdAt.toISOString(),
  };
}

/**
 * The outbox status of the registration recorded for `code` (undefined: no row). A registration that FAILED on
 * chain left a row nobody sees.
 */
export async function registrationStatusOf(db: Db, code: string): Promise<string | undefined> {
  const { rows } = await db.query(
    `SELECT t.status FROM departments d JOIN chain_transactions t ON t.id = d.chain_tx_id WHERE d.code = $1`,
    [code],
  );
  return rows[0]?.status;
}

/** Deletes the row of `code` if its registration failed on chain (it was never visible), freeing the code. */
export async function deleteFailedRegistration(db: Db, code: string): Promise<void> {
  await db.query(
    `DELETE FROM departments d USING chain_transactions t
     WHERE t.id = d.chain_tx_id AND d.code = $1 AND t.status = 'FAILED'`,
    [code],
  );
}

/** Deletes the row recorded with the outbox transaction `chainTxId` (its registration reverted on chain). */
export async function deleteRegistrationOf(db: Db, chainTxId: string): Promise<void> {
  await db.query(`DELETE FROM departments WHERE chain_tx_id = $1`, [chainTxId]);
}

export interface NewDepartment {
  code: string;
  name: string;
  webhookUrl: string | null;
  walletAddress: string;
  apiKeyHash: string;
  apiSecretSealed: Buffer;
  requireSignedRequests: boolean;
  /** The outbox record of its registration on chain. */
  chainTxId: string;
}

/** Records a department's off-chain part; returns its creation time. */
export async function insertDepartment(db: Db, department: NewDepartment): Promise<Date> {
  const row = { ...department, walletAddress: department.walletAddress.toLowerCase() };
  return (await insertRow(db, "departments", row, "created_at")).created_at;
}

/** Sets the off-chain details of a department. */
export async function updateDepartmentDetails(
  db: Db,
  code: string,
  details: { name: string; webhookUrl: string | null; requireSignedRequests: boolean },
): Promise<void> {
  await db.query(
    `UPDATE departments SET name = $2, webhook_url = $3, require_signed_requests = $4, updated_at = now()
     WHERE code = $1`,
    [code, details.name, details.webhookUrl, details.requireSignedRequests],
  );
}

/**
 * Replaces a department's API credentials, in the caller's transaction: locks the row, then returns when the
 * previous credentials were issued (null: at registration) and when these were.
 */
export async function replaceCredentials(
  tx: Tx,
  code: string,
  credentials: { apiKeyHash: string; apiSecretSealed: Buffer },
): Promise<{ previousRotatedAt: Date | null; rotatedAt: Date }> {
  const previous = await tx.query(`SELECT key_rotated_at FROM departments WHERE code = $1 FOR UPDATE`, [code]);
  const { rows } = await tx.query(
    `UPDATE departments SET api_key_hash = $2, api_secret_sealed = $3, key_rotated_at = now(), updated_at = now()
     WHERE code = $1 RETURNING key_rotated_at`,
    [code, credentials.apiKeyHash, credentials.apiSecretSealed],
  );
  return { previousRotatedAt: previous.rows[0]?.key_rotated_at ?? null, rotatedAt: rows[0].key_rotated_at };
}
