import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { freePort, isPortFree } from "../../scripts/stack/ports.ts";
import { REPO_ROOT, startStack } from "../../scripts/stack/stack.ts";
import { eventually } from "./support/eventually.ts";
import { npmRun, terminalEnv } from "./support/npmScript.ts";

/** `npm start`'s entry point, as a user runs it: the ready block, a working admin client, Ctrl-C. */
describe("npm start (scripts/start.ts)", function () {
  let dataDir: string;
  before(async () => (dataDir = await mkdtemp(path.join(os.tmpdir(), "npm-start-"))));
  after(async () => rm(dataDir, { recursive: true, force: true }));

  async function start(env: NodeJS.ProcessEnv) {
    const child = spawn(process.execPath, [path.join(REPO_ROOT, "scripts", "start.ts")], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout!.on("data", (d) => (output += d));
    child.stderr!.on("data", (d) => (output += d));
    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
    return { child, exited, output: () => output };
  }
  const waitFor = async (what: RegExp, output: () => string, timeoutMs = 90_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!what.test(output())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}:\n${output()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const leftovers = async () =>
    (await readdir(path.join(dataDir, "run")).catch(() => [])).filter((f) => f.endsWith(".pid"));
  /** Nothing it started still listens: the chain's and Postgres's ports are free again. */
  const released = async (env: Record<string, string>) =>
    (await isPortFree(Number(env.CHAIN_PORT))) &&
    (await isPortFree(Number(env.EMBEDDED_PG_PORT))) &&
    (await isPortFree(Number(env.PORT)));

  it("starts the platform, prints the ready block with a working admin client, and stops cleanly on Ctrl-C; npm run worker joins it by DATA_DIR alone", async function () {
    const port = await freePort();
    const ports = {
      PORT: String(port),
      CHAIN_PORT: String(await freePort()),
      EMBEDDED_PG_PORT: String(await freePort()),
      INDEXER_PORT: String(await freePort()),
      // Two: /health answers once the first listens, while the second is still starting.
      API_PROCESSES: "2",
    };
    const env = { DATA_DIR: dataDir, ...ports, DATABASE_URL: "", CHAIN_RPC_URL: "" };
    const run = await start(env);
    let child: ChildProcess | undefined = run.child;
    let worker: ReturnType<typeof npmRun> | undefined;
    try {
      // `npm run worker` in the README's environment (DATA_DIR and the moved ports), the moment /health answers.
      await eventually(
        "/health answering 200",
        async () => {
          if (run.child.exitCode !== null) throw new Error(`npm start exited:\n${run.output()}`);
          return (await fetch(`http://127.0.0.1:${port}/health`)).status === 200 ? true : undefined;
        },
        240_000,
      );
      worker = npmRun("worker", terminalEnv({ DATA_DIR: dataDir, ...ports, LOG_LEVEL: "info" }));
      await waitFor(/Press Ctrl-C to stop/, run.output);
      const text = run.output();
      // It turned the development conveniences on (nothing said otherwise) and says so, while starting and when ready.
      expect(text).to.include("development conveniences on (DEV_CONVENIENCES=true)");
      expect(text).to.match(/^ {2}Development {2}DEV_CONVENIENCES=true: passwordless development sign-in/m);
      expect(text).to.include(`API          http://127.0.0.1:${port}/api/v1`);
      expect(text).to.include(`API docs     http://127.0.0.1:${port}/docs`);
      expect(text).to.match(/Chain RPC    http:\/\/127\.0\.0\.1:\d+ +\(chain 31337, embedded anvil\)/);
      expect(text).to.include(`Verify       http://127.0.0.1:${port}/verify`);
      expect(text).to.include(`\nAPI=http://127.0.0.1:${port}/api/v1\n`);
      const [, clientId] = text.match(/^ID=(\S+)$/m)!;
      const [, secret] = text.match(/^SECRET=(\S+)$/m)!;
      // The secret it prints is the one it generated (an operator's ADMIN_CLIENT_SECRET is never printed).
      expect(secret).to.equal(
        (await readFile(path.join(dataDir, "secrets", "admin-client-secret"), "utf8")).trim().slice(2),
      );
      const token = await fetch(`http://127.0.0.1:${port}/api/v1/auth/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({
          grant_type: "client_credentials",
          client_id: clientId,
          client_secret: secret,
          scope: "admin",
        }),
      });
      expect(token.status).to.equal(200);
      expect((await fetch(`http://127.0.0.1:${port}/health`)).status).to.equal(200);

      await waitFor(/job runner started/, worker.output);
      expect(worker.output()).to.not.include("is not set");
      process.kill(-worker.child.pid!, "SIGTERM");
      await worker.exited;
      expect(worker.output()).to.match(/stopping worker/);

      run.child.kill("SIGINT");
      expect(await run.exited).to.equal(0);
      child = undefined;
      expect(run.output()).to.match(/SIGINT: stopping \(chain state is saved\)…\nStopped\./);
      expect(await leftovers()).to.deep.equal([]);
      expect(await released(env)).to.equal(true);
      expect(await readdir(path.join(dataDir, "chain"))).to.include("clean-shutdown");
    } finally {
      worker?.signal("SIGKILL");
      child?.kill("SIGKILL");
    }
  });

  it("without DEV_CONVENIENCES needs ADMIN_CLIENT_ID and ADMIN_CLIENT_SECRET: generates no secret and starts nothing", async function () {
    const own = await mkdtemp(path.join(os.tmpdir(), "npm-start-no-conveniences-"));
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
        ADMIN_CLIENT_ID: "",
        ADMIN_CLIENT_SECRET: "",
      };
      let refusal: Error | undefined;
      await startStack({ env, log: () => {} }).then(
        async (stack) => stack.stop(),
        (error: Error) => (refusal = error),
      );
      expect(refusal?.message).to.match(/ADMIN_CLIENT_ID and ADMIN_CLIENT_SECRET are required/);
      expect(await readdir(path.join(own, "secrets")).catch(() => [])).to.deep.equal([]);
      expect(await readdir(own)).to.not.include("postgres");
    } finally {
      await rm(own, { recursive: true, force: true });
    }
  });

  it("stops what it already started when Ctrl-C comes during start-up", async function () {
    const env = {
      DATA_DIR: dataDir,
      PORT: String(await freePort()),
      CHAIN_PORT: String(await freePort()),
      EMBEDDED_PG_PORT: String(await freePort()),
      INDEXER_PORT: String(await freePort()),
      DATABASE_URL: "",
      CHAIN_RPC_URL: "",
    };
    const run = await start(env);
    await waitFor(/Starting the licence approval platform/, run.output);
    await new Promise((r) => setTimeout(r, 2_000)); // part of the stack is up, not all of it
    run.child.kill("SIGINT");
    expect(await run.exited).to.equal(0);
    expect(run.output()).to.include("Stopped during start-up.");
    expect(await leftovers()).to.deep.equal([]);
    expect(await released(env)).to.equal(true);
  });
});
