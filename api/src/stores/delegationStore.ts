/** Applicants' delegations to system clients (app.delegations), written and read here. */
import type { Db } from "../db/queryable.ts";

export interface Delegation {
  applicantId: string;
  applicantName: string | null;
  clientId: string;
  clientName: string;
  scopes: string[];
  grantedAt: Date;
}

/** The scopes with which a system client acts for or reads about applicants: what a delegation is for. */
export const DELEGABLE_SCOPES = ["applications:read", "applications:write", "documents:read", "documents:write"];

const SELECT = `
  SELECT d.applicant_id, d.applicant_name, d.client_id, c.name AS client_name, c.scopes, d.granted_at
  FROM delegations d JOIN oauth_clients c ON c.client_id = d.client_id
  WHERE d.revoked_at IS NULL AND c.revoked_at IS NULL`;

const toDelegation = (row: Record<string, any>): Delegation => ({
  applicantId: row.applicant_id,
  applicantName: row.applicant_name,
  clientId: row.client_id,
  clientName: row.client_name,
  scopes: row.scopes,
  grantedAt: row.granted_at,
});

/**
 * SQL of the applicants with a live delegation to the client `$n` (the client's own revocation ends them too), for
 * `applicant_id IN (…)` filters.
 */
export const delegatedApplicantsSql = (param: string) =>
  `SELECT d.applicant_id FROM delegations d JOIN oauth_clients c ON c.client_id = d.client_id
   WHERE d.client_id = ${param} AND d.revoked_at IS NULL AND c.revoked_at IS NULL`;

/** A client an applicant may delegate to: live, not an administrator, holding a scope that acts for applicants. */
export async function delegableClient(
  db: Db,
  clientId: string,
): Promise<{ clientId: string; name: string; scopes: string[] } | undefined> {
  const { rows } = await db.query(
    `SELECT client_id, name, scopes FROM oauth_clients
     WHERE client_id = $1 AND revoked_at IS NULL AND NOT ('admin' = ANY(scopes)) AND scopes && $2::text[]`,
    [clientId, DELEGABLE_SCOPES],
  );
  return rows[0] ? { clientId: rows[0].client_id, name: rows[0].name, scopes: rows[0].scopes } : undefined;
}

/** Grants (or renews, with the applicant's current name and e-mail) a delegation; `renewed` when one was live. */
export async function grantDelegation(
  tx: Db,
  grant: { applicantId: string; clientId: string; applicantName: string | null; applicantEmail: string | null },
): Promise<{ grantedAt: Date; renewed: boolean }> {
  const { rows: live } = await tx.query(
    `SELECT 1 FROM delegations WHERE applicant_id = $1 AND client_id = $2 AND revoked_at IS NULL FOR UPDATE`,
    [grant.applicantId, grant.clientId],
  );
  const { rows } = await tx.query(
    `INSERT INTO delegations AS d (applicant_id, client_id, applicant_name, applicant_email)
     VALUES ($1, $2, $3, $4)
     ON CONFLICT (applicant_id, client_id) DO UPDATE
       SET applicant_name = excluded.applicant_name, applicant_email = excluded.applicant_email,
           granted_at = CASE WHEN d.revoked_at IS NULL THEN d.granted_at ELSE now() END, revoked_at = NULL
     RETURNING granted_at`,
    [grant.applicantId, grant.clientId, grant.applicantName, grant.applicantEmail],
  );
  return { grantedAt: rows[0].granted_at, renewed: live.length > 0 };
}

/** Ends the applicant's live delegation to the client; false when there was none. */
export async function revokeDelegation(tx: Db, applicantId: string, clientId: string): Promise<boolean> {
  const { rowCount } = await tx.query(
    `UPDATE delegations SET revoked_at = now() WHERE applicant_id = $1 AND client_id = $2 AND revoked_at IS NULL`,
    [applicantId, clientId],
  );
  return (rowCount ?? 0) > 0;
}

/** The applicant's live delegations, oldest first. */
export async function delegationsOfApplicant(db: Db, applicantId: string): Promise<Delegation[]> {
  const { rows } = await db.query(`${SELECT} AND d.applicant_id = $1 ORDER BY d.granted_at, d.client_id`, [
    applicantId,
  ]);
  return rows.map(toDelegation);
}

/** The live delegations to the client, oldest first. */
export async function delegationsToClient(db: Db, clientId: string): Promise<Delegation[]> {
  const { rows } = await db.query(`${SELECT} AND d.client_id = $1 ORDER BY d.granted_at, d.applicant_id`, [clientId]);
  return rows.map(toDelegation);
}

/** The applicant's live delegation to the client, with the name and e-mail they granted it with. */
export async function liveDelegation(
  db: Db,
  clientId: string,
  applicantId: string,
): Promise<{ applicantName: string | null; applicantEmail: string | null } | undefined> {
  const { rows } = await db.query(
    `SELECT d.applicant_name, d.applicant_email FROM delegations d JOIN oauth_clients c ON c.client_id = d.client_id
     WHERE d.client_id = $1 AND d.applicant_id = $2 AND d.revoked_at IS NULL AND c.revoked_at IS NULL`,
    [clientId, applicantId],
  );
  return rows[0] ? { applicantName: rows[0].applicant_name, applicantEmail: rows[0].applicant_email } : undefined;
}

/**
 * The applicant's name and e-mail as their own sign-in last told the platform: the latest delegation they granted
 * or request they created themself. For an administrator creating a request on someone's behalf.
 */
export async function applicantIdentityOnRecord(
  db: Db,
  applicantId: string,
): Promise<{ applicantName: string | null; applicantEmail: string | null }> {
  const { rows } = await db.query(
    `SELECT name, email FROM (
       SELECT applicant_name AS name, applicant_email AS email, granted_at AS at FROM delegations WHERE applicant_id = $1
       UNION ALL
       SELECT applicant_name, applicant_email, created_at FROM requests
       WHERE applicant_id = $1 AND created_by = 'applicant:' || $1
     ) known ORDER BY at DESC LIMIT 1`,
    [applicantId],
  );
  return { applicantName: rows[0]?.name ?? null, applicantEmail: rows[0]?.email ?? null };
}
