/**
 * Whether the API's database role could rewrite the audit trail (issue 15, L9). The append-only triggers on
 * `audit_logs` hold only against a role that can neither drop nor disable them: one that does not own the table
 * (nor belong to its owner) and is not a superuser. The embedded stack runs the API that way; against an external
 * DATABASE_URL the operator sets it up (docs/decisions.md) and a production API says at start-up when it is not.
 */
import type { Db } from "./queryable.ts";

export async function auditTableWeakness(db: Db, schema: string): Promise<string | undefined> {
  const { rows } = await db.query(
    `SELECT r.rolsuper AS superuser, pg_has_role(current_user, c.relowner, 'MEMBER') AS owner, pg_get_userbyid(c.relowner) AS owned_by
       FROM pg_roles r, pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE r.rolname = current_user AND n.nspname = $1 AND c.relname = 'audit_logs'`,
    [schema],
  );
  const row = rows[0];
  if (!row) return undefined;
  if (row.superuser)
    return "the API's database role is a superuser: it can drop the append-only triggers of audit_logs";
  if (row.owner)
    return `the API's database role owns audit_logs (through ${row.owned_by}): it can drop or disable its append-only triggers`;
  return undefined;
}
