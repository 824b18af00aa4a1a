/**
 * Several API processes behind one port (npm start's API_PROCESSES: Node's reusePort, the kernel spreads the
 * connections) and a worker process: a token from either process works on both; a write lands exactly once; the
 * supervisor restarts a worker that dies.
 */
import http from "node:http";
import { randomUUID } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import pg from "pg";
import { enqueueJob, JOB_NAMES } from "../../api/src/jobs/jobQueue.ts";
import { freePort } from "../../scripts/stack/ports.ts";
import { alive } from "../../scripts/stack/pidFile.ts";
import { startStack, type Stack } from "../../scripts/stack/stack.ts";
import { eventually } from "./support/eventually.ts";
import { letters } from "./support/sessions.ts";

interface Answer {
  status: number;
  instance: string | undefined;
  body: any;
}

/** One request on a connection of its own, so that the kernel picks the process again each time. */
function call(
  base: string,
  method: string,
  route: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      `${base}${route}`,
      { method, headers: { ...headers, connection: "close" }, agent: false },
      (response) => {
        let text = "";
        response.on("data", (chunk) => (text += chunk));
        response.on("end", () =>
          resolve({
            status: response.statusCode!,
            instance: response.headers["x-api-instance"] as string | undefined,
            body: text ? JSON.parse(text) : undefined,
          }),
        );
      },
    );
    request.on("error", reject);
    request.end(body);
  });
}

/** Calls until both processes have answered (or 200 tries); returns every answer. */
async function fromBoth(make: () => Promise<Answer>): Promise<Answer[]> {
  const answers: Answer[] = [];
  for (let i = 0; i < 200 && new Set(answers.map((a) => a.instance)).size < 2; i++) answers.push(await make());
  expect(new Set(answers.map((a) => a.instance))).to.deep.equal(new Set(["api", "api-2"]));
  return answers;
}

describe("two API processes behind one port, and a worker process (npm start API_PROCESSES=2 WORKER_PROCESSES=1)", function () {
  let stack: Stack;
  let dataDir: string;
  let base: string;
  let pool: pg.Pool;
  const logged: string[] = [];

  before(async function () {
    dataDir = await mkdtemp(path.join(os.tmpdir(), "multi-api-"));
    stack = await startStack({
      log: (line) => logged.push(line),
      env: {
        NODE_ENV: "test",
        DATA_DIR: dataDir,
        PORT: String(await freePort()),
        CHAIN_PORT: String(await freePort()),
        EMBEDDED_PG_PORT: String(await freePort()),
        INDEXER_PORT: String(await freePort()),
        API_PROCESSES: "2",
        WORKER_PROCESSES: "1",
        RATE_LIMIT_AUTH_PER_MINUTE: "0",
        RATE_LIMIT_WRITE_PER_MINUTE: "0",
        RATE_LIMIT_READ_PER_MINUTE: "0",
        DATABASE_URL: "",
        CHAIN_RPC_URL: "",
      },
    });
    base = stack.api.url;
    pool = new pg.Pool({
      connectionString: stack.databaseUrl,
      options: `-c search_path=${stack.config.apiSchema},public`,
    });
  });
  after(async () => {
    await pool?.end();
    await stack?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it("runs two API processes on one port and a worker, the APIs leaving jobs to it", async function () {
    expect(stack.apis.map((a) => a.port)).to.deep.equal([stack.api.port, stack.api.port]);
    expect(stack.apis.map((a) => a.process.isRunning())).to.deep.equal([true, true]);
    expect(stack.env.JOBS_IN_API).to.equal("false");
    const workerPid = Number((await readFile(path.join(dataDir, "run", "worker-1.pid"), "utf8")).trim());
    expect(() => process.kill(workerPid, 0)).to.not.throw();
  });

  it("accepts a token issued by either process on both", async function () {
    const form = new URLSearchParams({
      grant_type: "client_credentials",
      client_id: stack.admin.clientId,
      client_secret: stack.admin.clientSecret,
      scope: "admin",
    }).toString();
    const issued = await fromBoth(() =>
      call(base, "POST", "/api/v1/auth/token", { "content-type": "application/x-www-form-urlencoded" }, form),
    );
    const byIssuer = new Map(issued.map((a) => [a.instance, a.body.access_token as string]));
    for (const [issuer, token] of byIssuer) {
      expect(token, `token from ${issuer}`).to.be.a("string");
      const answers = await fromBoth(() =>
        call(base, "GET", "/api/v1/departments", { authorization: `Bearer ${token}` }),
      );
      for (const answer of answers) expect(answer.status, `token from ${issuer} at ${answer.instance}`).to.equal(200);
    }
  });

  it("lands a write exactly once, whichever process each retry reaches (Idempotency-Key)", async function () {
    const token = (
      await call(
        base,
        "POST",
        "/api/v1/auth/token",
        { "content-type": "application/x-www-form-urlencoded" },
        new URLSearchParams({
          grant_type: "client_credentials",
          client_id: stack.admin.clientId,
          client_secret: stack.admin.clientSecret,
          scope: "admin",
        }).toString(),
      )
    ).body.access_token;
    const code = `MULTI_${letters(Date.now() % 1e6)}`;
    const key = randomUUID();
    const post = () =>
      call(
        base,
        "POST",
        "/api/v1/departments",
        { authorization: `Bearer ${token}`, "content-type": "application/json", "idempotency-key": key },
        JSON.stringify({ code, name: "Both processes" }),
      );
    // The first attempts race each other (two at once), then retries go on until both processes have answered.
    const answers = [...(await Promise.all([post(), post()])), ...(await fromBoth(post))];
    const created = answers.filter((a) => a.status === 201);
    expect(created.length, JSON.stringify(answers.map((a) => [a.instance, a.status, a.body?.code]))).to.be.at.least(1);
    for (const answer of answers) expect([201, 409], JSON.stringify(answer.body)).to.include(answer.status);
    expect(new Set(created.map((a) => a.body.walletAddress)).size).to.equal(1);
    const rows = await pool.query(`SELECT count(*)::int AS n FROM departments WHERE code = $1`, [code]);
    expect(rows.rows[0].n).to.equal(1);
    const listed = await call(base, "GET", "/api/v1/departments", { authorization: `Bearer ${token}` });
    expect(listed.body.departments.filter((d: any) => d.code === code)).to.have.length(1);
  });

  it("restarts a worker that dies, says so, and the new one takes the jobs (the APIs run none)", async function () {
    const pidOf = async () => Number((await readFile(path.join(dataDir, "run", "worker-1.pid"), "utf8")).trim());
    const old = await pidOf();
    process.kill(old, "SIGKILL");
    const restarted = await eventually(
      "the worker restarted as a new process",
      async () => {
        const pid = await pidOf();
        return pid !== old && alive(pid) && logged.some((l) => l.startsWith(`worker-1 restarted (pid ${pid})`))
          ? pid
          : undefined;
      },
      60_000,
    );
    const said = logged.some((l) =>
      l.startsWith(`worker-1 (pid ${old}) exited unexpectedly (code null); restarting it`),
    );
    expect(said, logged.join("\n")).to.equal(true);
    // A job only a runner removes (removeOnComplete): with JOBS_IN_API=false, only the new worker can run it.
    const key = randomUUID();
    await enqueueJob(pool, JOB_NAMES.discardFiles, key, { txId: randomUUID() });
    await eventually(
      "the job run by the restarted worker",
      async () => {
        const { rowCount } = await pool.query(`SELECT 1 FROM agenda_jobs WHERE name = $1 AND job_key = $2`, [
          JOB_NAMES.discardFiles,
          key,
        ]);
        return rowCount === 0 ? true : undefined;
      },
      30_000,
    );
    expect(alive(restarted)).to.equal(true);
  });
});
