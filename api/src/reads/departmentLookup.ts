/** Departments as the index knows them now, looked up by code. */
import type pg from "pg";

/** Whether each of `codes` is registered (present in the map) and active. */
export async function departmentStatesByCode(
  pool: pg.Pool,
  codes: readonly string[],
): Promise<Map<string, { active: boolean }>> {
  if (codes.length === 0) return new Map();
  const { rows } = await pool.query(`SELECT code, active FROM index.departments WHERE code = ANY($1)`, [codes]);
  return new Map(rows.map((row) => [row.code as string, { active: Boolean(row.active) }]));
}
