/**
 * Whether the API's database role could rewrite the audit trail. The append-only triggers on `audit_logs` hold only
 * against a role that can neither drop nor disable them: one that does not own the table or its schema (a schema's
 * owner may drop any table in it), nor belong to their owner, and is not a superuser. The embedded stack runs the
 * API that way; against an external DATABASE_URL the operator sets it up (docs/decisions.md). A production process
 * refuses to start otherwise; elsewhere it warns.
 */
import type { Logger } from "pino";
import type { Db } from "./queryable.ts";

export async function auditTableWeakness(db: Db, schema: string): Promise<string | undefined> {
  const { rows } = await db.query(
    `SELECT r.rolsuper AS superuser,
            pg_has_role(current_user, c.relowner, 'MEMBER') AS owner, pg_get_userbyid(c.relowner) AS owned_by,
            pg_has_role(current_user, n.nspowner, 'MEMBER') AS schema_owner, pg_get_userbyid(n.nspowner) AS schema_owned_by
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
  if (row.schema_owner)
    return `the API's database role owns schema ${schema} (through ${row.schema_owned_by}), which holds audit_logs: it can drop the table`;
  return undefined;
}

/**
 * Every process that writes with the API's role checks this at start: production refuses a role that could rewrite
 * the trail (an upgrade that stops here names what to change); development and test only warn.
 */
export async function assertAuditTableRights(
  db: Db,
  options: { schema: string; production: boolean; logger: Logger },
): Promise<void> {
  const weakness = await auditTableWeakness(db, options.schema);
  if (!weakness) return;
  const remedy = `run it under a role that owns neither audit_logs nor schema ${options.schema} (docs/decisions.md, "The audit table is append-only")`;
  if (options.production) throw new Error(`Refused in production: ${weakness}; ${remedy}`);
  options.logger.warn(`${weakness}; in production this process would refuse to start: ${remedy}`);
}
