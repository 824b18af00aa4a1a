import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { expect } from "chai";
import pg from "pg";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { loadConfig, settings } from "../../api/src/config.ts";
import { assertAuditTableRights, auditTableWeakness } from "../../api/src/db/auditTableRights.ts";
import { migrate } from "../../api/src/db/migrate.ts";
import { createPool } from "../../api/src/db/pool.ts";
import { createLogger } from "../../api/src/observability/logger.ts";
import { assertPortFree, freePort } from "../../scripts/stack/ports.ts";
import { startStack } from "../../scripts/stack/stack.ts";
import { productionEnv } from "./support/productionEnv.ts";
import { current } from "./support/stackFixture.ts";

/** Runs the API process alone with exactly `env` (plus PATH); resolves with how it ended. */
async function runApiAlone(env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  const main = path.join(process.cwd(), "api", "src", "main.ts");
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [main], {
      env: { PATH: process.env.PATH!, ...env },
      timeout: 60_000,
    });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const failure = error as { code: number | null; stdout: string; stderr: string };
    return { code: failure.code, output: `${failure.stdout}${failure.stderr}` };
  }
}

describe("configuration", function () {
  it("uses embedded defaults when nothing is set", function () {
    const config = loadConfig({});
    expect(config).to.include({
      nodeEnv: "development",
      host: "127.0.0.1",
      port: 3000,
      chainId: 31337,
      chainPort: 8545,
    });
    expect(config.databaseUrl).to.equal(undefined);
    expect(config.chainRpcUrl).to.equal(undefined);
  });

  it("names every bad variable in one error", function () {
    expect(() => loadConfig({ PORT: "http", CHAIN_GAS_MODE: "cheap", MASTER_KEY: "abc" })).to.throw(
      /PORT must be an integer between 0 and 65535 \(got "http"\)[\s\S]*CHAIN_GAS_MODE must be one of market, free[\s\S]*MASTER_KEY must be 32 bytes of hex/,
    );
  });

  it("requires CHAIN_ID with CHAIN_RPC_URL", function () {
    expect(() => loadConfig({ CHAIN_RPC_URL: "http://besu:8545" })).to.throw(/CHAIN_ID is required with CHAIN_RPC_URL/);
  });

  it("refuses development conveniences in production", function () {
    expect(() => loadConfig({ NODE_ENV: "production" })).to.throw(
      /MASTER_KEY is required in production[\s\S]*DATABASE_URL is required in production[\s\S]*CHAIN_RPC_URL is required in production[\s\S]*development identity provider is refused/,
    );
  });

  it("says which port is taken and which variable moves it", async function () {
    const server = net.createServer().listen(0, "127.0.0.1");
    await new Promise((r) => server.once("listening", r));
    const port = (server.address() as net.AddressInfo).port;
    try {
      const error = await assertPortFree(port, "API", "PORT").then(
        () => undefined,
        (e: Error) => e,
      );
      expect(error?.message).to.equal(
        `Port ${port} (API) on 127.0.0.1 is already in use. Set PORT to a free port, e.g. PORT=${port + 100}.`,
      );
    } finally {
      server.close();
    }
  });

  it("documents every variable in .env.example (npm run env:example regenerates it)", async function () {
    const example = await readFile(".env.example", "utf8");
    for (const setting of Object.values(settings)) {
      expect(example, setting.env).to.include(`# ${setting.env}=`);
      expect(example, setting.env).to.include(`# ${setting.doc}`);
    }
  });
  describe("refusals at start (API, supervisor)", function () {
    it("refuses DEV_CONVENIENCES behind a proxy, with a public PUBLIC_BASE_URL or an identity provider, naming each, and generates nothing", async function () {
      const dataDir = await mkdtemp(path.join(os.tmpdir(), "dev-refused-"));
      try {
        const { code, output } = await runApiAlone({
          DATA_DIR: dataDir,
          PORT: "0",
          DEV_CONVENIENCES: "true",
          TRUST_PROXY_HOPS: "1",
          PUBLIC_BASE_URL: "https://licences.example.org",
          IDENTITY_PROVIDER_AUTHORIZE_URL: "https://id.example.org/authorize",
        });
        expect(code).to.not.equal(0);
        expect(output).to.match(/refused with TRUST_PROXY_HOPS=1: the API is behind a reverse proxy/);
        expect(output).to.match(/refused with PUBLIC_BASE_URL=https:\/\/licences\.example\.org/);
        expect(output).to.match(/refused with an identity provider configured \(IDENTITY_PROVIDER_AUTHORIZE_URL\)/);
        expect(output).to.not.match(/API listening/);
        expect(await readdir(dataDir)).to.deep.equal([]);
      } finally {
        await rm(dataDir, { recursive: true, force: true });
      }
    });

    it("npm start's supervisor without DEV_CONVENIENCES refuses missing secrets before it starts or generates anything", async function () {
      const own = await mkdtemp(path.join(os.tmpdir(), "supervisor-secrets-"));
      try {
        const env = {
          DATA_DIR: own,
          DEV_CONVENIENCES: "false",
          PORT: String(await freePort()),
          CHAIN_PORT: String(await freePort()),
          EMBEDDED_PG_PORT: String(await freePort()),
          INDEXER_PORT: String(await freePort()),
          DATABASE_URL: "",
          CHAIN_RPC_URL: "",
          ADMIN_CLIENT_ID: "ops-admin",
          ADMIN_CLIENT_SECRET: randomBytes(32).toString("hex"),
        };
        const refusal = await startStack({ env, log: () => {} }).then(
          async (stack) => {
            await stack.stop();
            return undefined;
          },
          (error: Error) => error,
        );
        expect(refusal?.message).to.match(/MASTER_KEY is required \(or DEV_CONVENIENCES=true/);
        expect(await readdir(path.join(own, "secrets")).catch(() => [])).to.deep.equal([]);
        expect(await readdir(own)).to.not.include("postgres");
      } finally {
        await rm(own, { recursive: true, force: true });
      }
    });

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
