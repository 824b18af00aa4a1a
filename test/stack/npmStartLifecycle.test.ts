/**
 * `npm start` itself as a terminal runs it: npm as the leader of a process group of its own, stopped by a SIGINT to
 * the whole group (what Ctrl-C does); a second start on the same data directory; an API process, an indexer that
 * dies; an idle chain.
 */
import { spawn } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, stat } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { freePort, isPortFree } from "../../scripts/stack/ports.ts";
import { REPO_ROOT } from "../../scripts/stack/stack.ts";
import { rpc } from "../../scripts/stack/localChain.ts";
import { alive } from "../../scripts/stack/pidFile.ts";
import { stackProcesses } from "../../scripts/stack/processTable.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `npm start` as the leader of a new process group, like a shell's foreground job. */
function startInOwnGroup(env: NodeJS.ProcessEnv) {
  const child = spawn("npm", ["start"], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let output = "";
  child.stdout!.on("data", (d) => (output += d));
  child.stderr!.on("data", (d) => (output += d));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, exited, output: () => output };
}

async function waitFor(what: RegExp, output: () => string, timeoutMs = 120_000) {
  const deadline = Date.now() + timeoutMs;
  while (!what.test(output())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}:\n${output()}`);
    await sleep(100);
  }
}

async function eventually<T>(probe: () => Promise<T | undefined>, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await sleep(200);
  }
}

describe("npm start in a terminal (process group, second start, supervision, idle chain)", function () {
  let dataDir: string;
  let env: Record<string, string>;
  let run: ReturnType<typeof startInOwnGroup> | undefined;
  const pids = async () => {
    const out: Record<string, number> = {};
    for (const file of (await readdir(path.join(dataDir, "run")).catch(() => [])).filter((f) => f.endsWith(".pid"))) {
      out[file.slice(0, -4)] = Number((await readFile(path.join(dataDir, "run", file), "utf8")).trim());
    }
    const postmaster = Number(
      (await readFile(path.join(dataDir, "postgres", "postmaster.pid"), "utf8").catch(() => "")).split("\n")[0],
    );
    if (postmaster) out.postgres = postmaster;
    const lock = await readFile(path.join(dataDir, "run", "stack.json"), "utf8").catch(() => undefined);
    if (lock) out.supervisor = JSON.parse(lock).pid;
    return out;
  };

  before(async function () {
    dataDir = await mkdtemp(path.join(os.tmpdir(), "npm-start-group-"));
    env = {
      DATA_DIR: dataDir,
      PORT: String(await freePort()),
      CHAIN_PORT: String(await freePort()),
      EMBEDDED_PG_PORT: String(await freePort()),
      INDEXER_PORT: String(await freePort()),
      API_PROCESSES: "1",
      DATABASE_URL: "",
      CHAIN_RPC_URL: "",
    };
    const started = Date.now();
    run = startInOwnGroup(env);
    await waitFor(/Press Ctrl-C to stop/, run.output);
    console.log(`      (npm start ready in ${((Date.now() - started) / 1000).toFixed(1)} s)`);
  });
  after(async () => {
    if (run) {
      for (const pid of Object.values(await pids())) if (alive(pid)) process.kill(pid, "SIGKILL");
      if (run.child.exitCode === null && run.child.signalCode === null) process.kill(-run.child.pid!, "SIGKILL");
    }
    await rm(dataDir, { recursive: true, force: true });
  });
  /** What is still running of this stack: npm's group, the supervisor's (children included), anything on dataDir. */
  const leftovers = async (groups: number[]) =>
    // A zombie has exited already; its parent (or init) reaps it.
    (await stackProcesses(groups, dataDir)).filter((p) => p.state !== "Z");

  it("refuses a second start on the same data directory, naming where the platform runs, and touches nothing", async function () {
    const before = await pids();
    const second = startInOwnGroup(env);
    const code = await second.exited;
    expect(code).to.not.equal(0);
    expect(second.output()).to.include(`already running at http://127.0.0.1:${env.PORT}`);
    expect(await pids()).to.deep.equal(before);
    for (const pid of Object.values(before)) expect(alive(pid), `pid ${pid}`).to.equal(true);
    expect((await fetch(`http://127.0.0.1:${env.PORT}/health`)).status).to.equal(200);
    expect(run!.output()).to.not.match(/exited unexpectedly|Stopped/);
  });

  it("restarts an API process that dies, and says so", async function () {
    const { api: old } = await pids();
    process.kill(old, "SIGKILL");
    const restarted = await eventually(
      async () => {
        const { api } = await pids();
        return api && api !== old && (await fetch(`http://127.0.0.1:${env.PORT}/health`)).status === 200
          ? api
          : undefined;
      },
      60_000,
      "the API back, healthy, as a new process",
    );
    expect(alive(restarted)).to.equal(true);
    expect(run!.output()).to.match(new RegExp(`api \\(pid ${old}\\) exited unexpectedly`));
    expect(run!.output()).to.include("api restarted");
  });

  it("restarts an indexer that dies, and says so", async function () {
    const { indexer: old } = await pids();
    process.kill(old, "SIGKILL");
    await waitFor(/indexer restarted \(pid \d+\)/, run!.output);
    const { indexer: restarted } = await pids();
    expect(restarted).to.not.equal(old);
    expect(alive(restarted)).to.equal(true);
    expect(run!.output()).to.match(new RegExp(`indexer \\(pid ${old}\\) exited unexpectedly`));
    await eventually(
      async () => ((await fetch(`http://127.0.0.1:${env.PORT}/health`)).status === 200 ? true : undefined),
      60_000,
      "the stack healthy",
    );
  });

  it("saves the embedded chain only after new blocks", async function () {
    const stateFile = path.join(dataDir, "chain", "state.json");
    const rpcUrl = `http://127.0.0.1:${env.CHAIN_PORT}`;
    // Settle: whatever the start-up mined is saved within a few intervals.
    await sleep(1_000);
    const idle = (await stat(stateFile)).mtimeMs;
    await sleep(1_500); // 6 intervals of the 250 ms check
    expect((await stat(stateFile)).mtimeMs, "idle chain re-saved").to.equal(idle);

    await rpc(rpcUrl, "evm_mine", []);
    const head = Number(await rpc<string>(rpcUrl, "eth_blockNumber", []));
    await eventually(
      async () => ((await stat(stateFile)).mtimeMs > idle ? true : undefined),
      5_000,
      "a save after the new block",
    );
    const saved = JSON.parse(await readFile(stateFile, "utf8"));
    expect(Number(saved.block?.number ?? saved.best_block_number)).to.equal(head);
  });

  it("stops within 10 s on a SIGINT to the whole process group: Stopped., chain saved, no re-index, no process left", async function () {
    const running = await pids();
    expect(Object.keys(running)).to.include.members(["api", "indexer", "chain", "postgres", "supervisor"]);
    // npm leads the terminal's group; the supervisor leads its own, which its children share.
    const groups = [run!.child.pid!, running.supervisor];
    const before = (await leftovers(groups)).map((p) => p.pid);
    expect(before, "the scan sees the stack").to.include.members([run!.child.pid!, ...Object.values(running)]);
    const signalled = Date.now();
    const printedBefore = run!.output().length;
    process.kill(-run!.child.pid!, "SIGINT");
    const code = await Promise.race([run!.exited, sleep(10_000).then(() => "timeout" as const)]);
    const stopMs = Date.now() - signalled;
    console.log(`      (stopped ${stopMs} ms after the group SIGINT)`);
    expect(code, run!.output()).to.equal(0);
    expect(run!.output()).to.match(/SIGINT: stopping \(chain state is saved\)…\nStopped\./);
    expect(run!.output().slice(printedBefore)).to.not.match(/exited unexpectedly|re-index|restart/);
    for (const [name, pid] of Object.entries(running))
      expect(alive(pid), `${name} (pid ${pid}) still running`).to.equal(false);
    const left = await leftovers(groups);
    expect(
      left.map((p) => `${p.pid} ${p.command}`),
      "processes of npm's group, the supervisor's, or on the data directory",
    ).to.deep.equal([]);
    expect(await readdir(path.join(dataDir, "run"))).to.deep.equal([]);
    expect(await readdir(path.join(dataDir, "chain"))).to.include("clean-shutdown");
    expect((await stat(path.join(dataDir, "chain", "state.json"))).mtimeMs).to.be.greaterThan(signalled - 1);
    for (const port of [env.PORT, env.CHAIN_PORT, env.EMBEDDED_PG_PORT, env.INDEXER_PORT])
      expect(await isPortFree(Number(port)), `port ${port}`).to.equal(true);
  });
});

describe("npm start with a port taken", function () {
  it("checks every port, the API's included, before starting anything", async function () {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), "npm-start-port-"));
    const blocker = net.createServer();
    const apiPort = await freePort();
    await new Promise<void>((resolve) => blocker.listen(apiPort, "127.0.0.1", resolve));
    try {
      const env = {
        DATA_DIR: dataDir,
        PORT: String(apiPort),
        CHAIN_PORT: String(await freePort()),
        EMBEDDED_PG_PORT: String(await freePort()),
        INDEXER_PORT: String(await freePort()),
        DATABASE_URL: "",
        CHAIN_RPC_URL: "",
      };
      const run = startInOwnGroup(env);
      expect(await run.exited).to.equal(1);
      expect(run.output()).to.include(`Port ${apiPort} (API) on 127.0.0.1 is already in use. Set PORT`);
      // Nothing was started: no Postgres cluster, no chain, no pid left.
      expect(await readdir(dataDir)).to.not.include.members(["postgres", "chain"]);
      expect((await readdir(path.join(dataDir, "run")).catch(() => [])).length).to.equal(0);
    } finally {
      blocker.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
