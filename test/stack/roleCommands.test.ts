/**
 * The role commands of a deployment on several hosts (docs/architecture.md, "More than one process"), each run as
 * its npm script from a fresh terminal and configured by a `.env` file (ENV_FILE): `npm run api` joins the running
 * platform with what the file says, variables already set winning; `npm run indexer` indexes the platform's chain
 * into a database of its own, says when it is ready, and stops on SIGTERM; without its settings it says which.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import pg from "pg";
import { settings } from "../../api/src/config.ts";
import { freePort, isPortFree } from "../../scripts/stack/ports.ts";
import { clientToken } from "./support/authClient.ts";
import { eventually } from "./support/eventually.ts";
import { npmRun, terminalEnv, writeEnvFile } from "./support/npmScript.ts";
import { current } from "./support/stackFixture.ts";
import { letters } from "./support/sessions.ts";

describe("role commands read .env (npm run api, npm run indexer)", function () {
  let scratch: string;
  before(async () => (scratch = await mkdtemp(path.join(os.tmpdir(), "role-commands-"))));
  after(async () => rm(scratch, { recursive: true, force: true }));

  it("npm run api: an API on the port its .env file names, with the file's settings; a variable already set wins", async function () {
    const stack = current();
    const port = await freePort();
    const envFile = path.join(scratch, "api.env");
    // Every setting the running platform's APIs share (database, chain, issuer, secrets under DATA_DIR …), as an
    // operator copies them to another host's .env, and what this host sets for itself.
    const shared = Object.fromEntries(Object.values(settings).map(({ env }) => [env, stack.env[env]]));
    await writeEnvFile(envFile, {
      ...shared,
      PORT: String(port),
      // Loopback: a development stack (DEV_CONVENIENCES, shared above) is refused behind any other public URL.
      PUBLIC_BASE_URL: `http://localhost:${port}`,
      JOBS_IN_API: "false",
      API_INSTANCE: "from-env-file",
    });
    const api = npmRun("api", terminalEnv({ ENV_FILE: envFile, API_INSTANCE: "from-terminal" }));
    try {
      const base = `http://127.0.0.1:${port}`;
      const document = await eventually(
        "the API answering on the port of its .env file",
        async () => {
          if (api.child.exitCode !== null) throw new Error(`npm run api exited:\n${api.output()}`);
          const answer = await fetch(`${base}/api/v1/openapi.json`);
          return answer.ok ? answer : undefined;
        },
        90_000,
      );
      expect(document.headers.get("x-api-instance")).to.equal("from-terminal");
      const { servers } = (await document.json()) as { servers: { url: string }[] };
      expect(servers[0].url).to.match(new RegExp(`^http://localhost:${port}`));
      // The shared issuer and keys: a token from the platform's own API is accepted here.
      const token = await clientToken(stack.api.url, stack.admin.clientId, stack.admin.clientSecret, "admin");
      const departments = await fetch(`${base}/api/v1/departments`, { headers: { authorization: `Bearer ${token}` } });
      expect(departments.status).to.equal(200);

      api.signal("SIGTERM");
      expect(await api.exited, api.output()).to.equal(0);
      expect(await isPortFree(port)).to.equal(true);
    } finally {
      api.signal("SIGKILL");
    }
  });

  it("npm run indexer: indexes the platform's chain into its own database from .env, says when ready, stops on SIGTERM", async function () {
    const stack = current();
    // Something on chain to index: a department (DepartmentRegistered).
    const token = await clientToken(stack.api.url, stack.admin.clientId, stack.admin.clientSecret, "admin");
    const code = `ROLE_${letters(randomBytes(4).toString("hex")).toUpperCase()}`;
    const created = await fetch(`${stack.api.url}/api/v1/departments`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ code, name: "Indexed by the indexer role" }),
    });
    expect(created.status, await created.clone().text()).to.equal(201);
    const database = `indexer_role_${randomBytes(4).toString("hex")}`;
    const admin = new pg.Client({ connectionString: stack.databaseUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${database}`);
    const url = new URL(stack.databaseUrl);
    url.pathname = `/${database}`;
    const port = await freePort();
    const envFile = path.join(scratch, "indexer.env");
    await writeEnvFile(envFile, {
      DATABASE_URL: url.toString(),
      CHAIN_RPC_URL: stack.rpcUrl,
      DEPLOYMENT_FILE: stack.config.deploymentFile,
      INDEXER_PORT: String(port),
    });
    const indexer = npmRun("indexer", terminalEnv({ ENV_FILE: envFile }));
    const own = new pg.Client({ connectionString: url.toString() });
    try {
      await eventually(
        "the indexer ready",
        async () => {
          if (indexer.child.exitCode !== null) throw new Error(`npm run indexer exited:\n${indexer.output()}`);
          return indexer.output().includes(`Indexer ready at http://127.0.0.1:${port}`) ? true : undefined;
        },
        150_000,
      );
      expect((await fetch(`http://127.0.0.1:${port}/ready`)).status).to.equal(200);
      // Its views (schema index) in its own database hold what the platform's indexer holds.
      await own.connect();
      const departments = async (client: pg.Client) =>
        (await client.query(`SELECT department_id, code FROM index.departments ORDER BY department_id`)).rows
          .map((r) => `${r.department_id}:${r.code}`)
          .join();
      const expected = await departments(admin);
      expect(expected).to.include(code);
      await eventually(
        "the same departments indexed",
        async () => ((await departments(own)) === expected ? true : undefined),
        30_000,
      );

      indexer.signal("SIGTERM");
      expect(await indexer.exited, indexer.output()).to.equal(0);
      expect(indexer.output()).to.include("SIGTERM: stopping the indexer");
      expect(await isPortFree(port)).to.equal(true);
    } finally {
      indexer.signal("SIGKILL");
      await own.end().catch(() => {});
      await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      await admin.end();
    }
  });

  it("npm run indexer without its settings names each missing one and starts nothing", async function () {
    const envFile = path.join(scratch, "empty.env");
    await writeEnvFile(envFile, { INDEXER_PORT: String(await freePort()) });
    const indexer = npmRun("indexer", terminalEnv({ ENV_FILE: envFile }));
    expect(await indexer.exited).to.equal(1);
    expect(indexer.output()).to.include("npm run indexer needs DATABASE_URL, CHAIN_RPC_URL, DEPLOYMENT_FILE");
  });
});
