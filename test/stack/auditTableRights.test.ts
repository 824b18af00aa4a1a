/**
 * The API's database role and the audit trail: a production API refuses a role that could rewrite audit_logs, and
 * says why elsewhere. Beside the fixture stack's database.
 */
import { expect } from "chai";
import pg from "pg";
import { assertAuditTableRights, auditTableWeakness } from "../../api/src/db/auditTableRights.ts";
import { migrate } from "../../api/src/db/migrate.ts";
import { createPool } from "../../api/src/db/pool.ts";
import { createLogger } from "../../api/src/observability/logger.ts";
import { productionEnv } from "./support/productionEnv.ts";
import { current } from "./support/stackFixture.ts";
import { runApiAlone } from "../unit/support/runApiAlone.ts";

describe("the API's database role and the audit trail", function () {
  it("in production refuses a database role that could rewrite the audit trail (here a superuser), naming it", async function () {
    const stack = current();
    const { code, output } = await runApiAlone({
      ...(await productionEnv(stack)),
      ...apiServices(),
      PORT: "0",
      DATA_DIR: stack.config.dataDir,
      // The stack's superuser, not its API role.
      DATABASE_URL: stack.databaseUrl,
    });
    expect(code).to.not.equal(0);
    expect(output).to.match(/Refused in production: the API's database role is a superuser/);
    expect(output).to.not.match(/API listening/);
  });

  it("sees a role that owns the audit table's schema (it could drop the table): refused in production, a warning elsewhere", async function () {
    const stack = current();
    const schema = `schema_owner_${Date.now()}`;
    const role = `${schema}_role`;
    const admin = createPool(stack.databaseUrl, schema, 2);
    try {
      await migrate(admin, schema);
      await admin.query(`CREATE ROLE ${role} LOGIN PASSWORD 'owner-probe'`);
      await admin.query(`ALTER SCHEMA ${schema} OWNER TO ${role}`); // the table stays the superuser's
      const url = new URL(stack.databaseUrl);
      url.username = role;
      url.password = "owner-probe";
      const owner = new pg.Client({ connectionString: url.href });
      await owner.connect();
      try {
        expect(await auditTableWeakness(owner, schema)).to.match(
          new RegExp(`owns schema ${schema} \\(through ${role}\\), which holds audit_logs: it can drop the table`),
        );
        const refusal = await assertAuditTableRights(owner, {
          schema,
          production: true,
          logger: createLogger("silent"),
        }).catch((error: Error) => error);
        expect((refusal as Error).message).to.match(/^Refused in production: .* owns schema/);
        const warnings: string[] = [];
        const logger = createLogger("silent");
        logger.warn = ((message: string) => void warnings.push(message)) as typeof logger.warn;
        await assertAuditTableRights(owner, { schema, production: false, logger });
        expect(warnings).to.have.length(1);
        expect(warnings[0]).to.match(/owns schema .* in production this process would refuse to start/);
      } finally {
        await owner.end();
      }
    } finally {
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => {});
      await admin.query(`DROP ROLE IF EXISTS ${role}`).catch(() => {});
      await admin.end();
    }
  });
});

/** Where the fixture stack's chain, deployment and indexer are (an API beside it needs them). */
function apiServices(): NodeJS.ProcessEnv {
  const env = current().env;
  const keep = [
    "CHAIN_RPC_URL",
    "CHAIN_ID",
    "DEPLOYMENT_FILE",
    "INDEXER_URL",
    "ADMIN_CLIENT_ID",
    "ADMIN_CLIENT_SECRET",
  ];
  return Object.fromEntries(keep.map((name) => [name, env[name]]));
}
