/**
 * The embedded stack's API and worker processes log in as `licence_api`, not as the superuser (kept by the
 * supervisor, its migrations and the indexer). It owns the API's schema but `audit_logs` and its append-only trigger
 * function, which belong to `licence_audit` (no login; it owns the schema too, as a schema's owner may drop any table
 * in it): the API may only read the audit table and add to it, so a compromised API can neither change nor remove an
 * audit row, nor its triggers or table. Run at every start after the migrations, to hand over new tables.
 */
import pg from "pg";
import { ident } from "../../api/src/db/migrate.ts";
import { developmentSecret } from "../../api/src/developmentSecrets.ts";

export const API_ROLE = "licence_api";
export const AUDIT_OWNER_ROLE = "licence_audit";
/** What only the audit owner holds: the table and the function of its append-only triggers. */
const AUDIT_TABLE = "audit_logs";
const AUDIT_FUNCTION = "audit_logs_append_only";

/** The API role's connection URL to the embedded database (its password is generated under DATA_DIR/secrets). */
export async function apiRoleUrl(dataDir: string, port: number): Promise<string> {
  const password = (await developmentSecret(dataDir, "api-db.password", 24)).slice(2);
  return `postgres://${API_ROLE}:${encodeURIComponent(password)}@127.0.0.1:${port}/licence`;
}

/** Creates (or updates) the roles and hands the API's schema over; returns the API role's URL. */
export async function prepareApiRole(
  adminUrl: string,
  config: { apiSchema: string; dataDir: string; embeddedPostgresPort: number },
): Promise<string> {
  const url = await apiRoleUrl(config.dataDir, config.embeddedPostgresPort);
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query("BEGIN");
    await ensureRoles(admin, decodeURIComponent(new URL(url).password));
    await handOver(admin, config.apiSchema);
    await grantIndexReads(admin);
    await admin.query("COMMIT");
  } catch (error) {
    await admin.query("ROLLBACK").catch(() => {});
    throw error;
  } finally {
    await admin.end();
  }
  return url;
}

async function ensureRoles(admin: pg.Client, password: string): Promise<void> {
  const found = await admin.query(`SELECT rolname FROM pg_roles WHERE rolname = ANY ($1)`, [
    [API_ROLE, AUDIT_OWNER_ROLE],
  ]);
  const existing = new Set(found.rows.map((r) => r.rolname));
  if (!existing.has(API_ROLE)) await admin.query(`CREATE ROLE ${API_ROLE} LOGIN`);
  if (!existing.has(AUDIT_OWNER_ROLE)) await admin.query(`CREATE ROLE ${AUDIT_OWNER_ROLE} NOLOGIN`);
  await admin.query(
    `ALTER ROLE ${API_ROLE} WITH LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS PASSWORD ${admin.escapeLiteral(password)}`,
  );
  await admin.query(`ALTER ROLE ${AUDIT_OWNER_ROLE} WITH NOLOGIN NOSUPERUSER NOINHERIT`);
}

/**
 * Everything in the schema to the API role but the audit table and its trigger function, which go to the audit
 * owner. The schema itself too: its owner could drop any table in it (the audit table included), so the API role only
 * uses it and creates in it.
 */
async function handOver(admin: pg.Client, schema: string): Promise<void> {
  const quoted = ident(schema);
  await admin.query(`ALTER SCHEMA ${quoted} OWNER TO ${AUDIT_OWNER_ROLE}`);
  await admin.query(`GRANT USAGE, CREATE ON SCHEMA ${quoted} TO ${API_ROLE}`);
  const relations = await admin.query(
    `SELECT c.relname, c.relkind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND c.relkind IN ('r', 'p', 'v', 'm', 'S')
        AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype IN ('a', 'i'))`,
    [schema],
  );
  const kinds: Record<string, string> = { r: "TABLE", p: "TABLE", v: "VIEW", m: "MATERIALIZED VIEW", S: "SEQUENCE" };
  for (const { relname, relkind } of relations.rows) {
    const owner = relname === AUDIT_TABLE ? AUDIT_OWNER_ROLE : API_ROLE;
    await admin.query(`ALTER ${kinds[relkind]} ${quoted}.${ident(relname)} OWNER TO ${owner}`);
  }
  const functions = await admin.query(
    `SELECT p.oid::regprocedure AS signature, p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = $1`,
    [schema],
  );
  for (const { signature, proname } of functions.rows)
    await admin.query(
      `ALTER FUNCTION ${signature} OWNER TO ${proname === AUDIT_FUNCTION ? AUDIT_OWNER_ROLE : API_ROLE}`,
    );
  // The API reads the audit trail and adds to it; nothing else.
  await admin.query(`REVOKE ALL ON ${quoted}.${AUDIT_TABLE} FROM ${API_ROLE}, PUBLIC`);
  await admin.query(`GRANT SELECT, INSERT ON ${quoted}.${AUDIT_TABLE} TO ${API_ROLE}`);
}

/**
 * Read access to what the indexer writes (as the superuser): its views schema and build schemas, now and as it
 * creates them (default privileges of the superuser, the role the indexer connects as).
 */
async function grantIndexReads(admin: pg.Client): Promise<void> {
  const creator = admin.escapeIdentifier((await admin.query(`SELECT current_user AS name`)).rows[0].name);
  await admin.query(`ALTER DEFAULT PRIVILEGES FOR ROLE ${creator} GRANT USAGE ON SCHEMAS TO ${API_ROLE}`);
  await admin.query(`ALTER DEFAULT PRIVILEGES FOR ROLE ${creator} GRANT SELECT ON TABLES TO ${API_ROLE}`);
  const schemas = await admin.query(
    `SELECT nspname FROM pg_namespace WHERE nspowner = (SELECT oid FROM pg_roles WHERE rolname = current_user)
        AND nspname NOT LIKE 'pg\\_%' AND nspname NOT IN ('information_schema')`,
  );
  for (const { nspname } of schemas.rows) {
    const quoted = admin.escapeIdentifier(nspname);
    await admin.query(`GRANT USAGE ON SCHEMA ${quoted} TO ${API_ROLE}`);
    await admin.query(`GRANT SELECT ON ALL TABLES IN SCHEMA ${quoted} TO ${API_ROLE}`);
  }
}
