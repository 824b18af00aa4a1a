/** Departments as the chain has them (index.departments): on-chain id, wallet and who holds its key. */
import type { ApprovalRegistryCustodyName } from "../../../abis/index.ts";
import type { Db } from "../db/queryable.ts";

export interface DepartmentOnChain {
  departmentId: number;
  wallet: string;
  custody: ApprovalRegistryCustodyName;
}

/** The department registered on chain under `code`, once indexed. */
export async function departmentOnChain(db: Db, code: string): Promise<DepartmentOnChain | undefined> {
  const { rows } = await db.query(`SELECT department_id, wallet, custody FROM index.departments WHERE code = $1`, [
    code,
  ]);
  const row = rows[0];
  return row ? { departmentId: Number(row.department_id), wallet: row.wallet, custody: row.custody } : undefined;
}

/** Whether the chain has a department with this code (registered through this API or not). */
export async function isRegisteredOnChain(db: Db, code: string): Promise<boolean> {
  const { rows } = await db.query(`SELECT 1 FROM index.departments WHERE code = $1`, [code]);
  return rows.length > 0;
}

/** Whether each of `codes` is registered on chain (present) and active; for checking a workflow's departments. */
export async function departmentStatesOf(db: Db, codes: readonly string[]): Promise<Map<string, { active: boolean }>> {
  if (codes.length === 0) return new Map();
  const { rows } = await db.query(`SELECT code, active FROM index.departments WHERE code = ANY($1)`, [
    [...new Set(codes)],
  ]);
  return new Map(rows.map((row) => [row.code as string, { active: Boolean(row.active) }]));
}
