/**
 * The bench's figures file and its CPU accounting, without a stack: docs/benchmarks.json has exactly the keys issue
 * 19 names (numbers only), the writer refuses anything else, and the /proc reader counts a process tree's CPU,
 * children that ended included, without counting more than the wall time allows.
 */
import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import {
  FIGURES_FILE,
  figurePaths,
  figureProblems,
  readFigures,
  writeFigures,
  type Figures,
} from "../../scripts/bench/benchmarkFigures.ts";
import { LOAD_GENERATOR, parseStat, StackCpuMeter } from "../../scripts/bench/processCpu.ts";

// The keys docs/benchmarks.json promises its readers, written out here so that a renamed key fails this test.
const ISSUE_KEYS = [
  "writes.automine.{rawTxPerSec, e2eReqPerSec, cpuMsPerWrite}",
  "writes.interval1s.{rawTxPerSec, e2eReqPerSec, p95Ms, cpuMsPerWrite}",
  "approvals.interval1s.{oneDepartmentPerSec, eightDepartmentsPerSec}",
  "reads.{bareHttpP95Ms, detailP95Ms, listP95Ms, verifyP95Ms, apiCpuMsPerDetailRead}",
  "gas.{mint, anchorVersion, approval, lifecycle}",
].flatMap((line) => {
  const [, prefix, keys] = /^(.*)\.\{(.*)\}$/.exec(line)!;
  return keys.split(", ").map((key) => `${prefix}.${key}`);
});

const complete = (): Figures => ({
  writes: {
    automine: { rawTxPerSec: 500, e2eReqPerSec: 40, cpuMsPerWrite: 45 },
    interval1s: { rawTxPerSec: 450, e2eReqPerSec: 40, p95Ms: 1400, cpuMsPerWrite: 30 },
  },
  approvals: { interval1s: { oneDepartmentPerSec: 4, eightDepartmentsPerSec: 20 } },
  reads: { bareHttpP95Ms: 17.5, detailP95Ms: 73.21, listP95Ms: 115, verifyP95Ms: 87, apiCpuMsPerDetailRead: 1.1234 },
  gas: { mint: 78061, anchorVersion: 58093, approval: 50627, lifecycle: 609926 },
});

describe("bench figures (docs/benchmarks.json)", function () {
  it("declares exactly the issue's keys", function () {
    expect(figurePaths().sort()).to.deep.equal([...ISSUE_KEYS].sort());
  });

  it("the committed docs/benchmarks.json has exactly those keys, each a finite number", async function () {
    expect(figureProblems(await readFigures(FIGURES_FILE))).to.deep.equal([]);
  });

  it("names a missing key, an extra key and a value that is not a number", function () {
    const figures = complete() as any;
    delete figures.reads.listP95Ms;
    figures.gas.extra = 1;
    figures.writes.automine.cpuMsPerWrite = "45";
    figures.approvals.interval1s.oneDepartmentPerSec = Number.NaN;
    expect(figureProblems(figures)).to.have.members([
      "reads.listP95Ms: missing",
      "gas.extra: not a key of the figures",
      'writes.automine.cpuMsPerWrite: "45" is not a finite number',
      "approvals.interval1s.oneDepartmentPerSec: null is not a finite number",
    ]);
    expect(figureProblems(complete())).to.deep.equal([]);
  });

  it("writes complete figures rounded to 3 significant digits, and refuses incomplete ones without writing", async function () {
    const dir = await mkdtemp(path.join(os.tmpdir(), "bench-figures-"));
    try {
      const file = path.join(dir, "figures.json");
      await writeFigures(complete(), file);
      const written = JSON.parse(await readFile(file, "utf8"));
      expect(written.reads.detailP95Ms).to.equal(73.2);
      expect(written.reads.apiCpuMsPerDetailRead).to.equal(1.12);
      expect(written.gas.lifecycle).to.equal(609926);
      const partial = complete() as any;
      delete partial.gas;
      const other = path.join(dir, "partial.json");
      await writeFigures(partial, other).then(
        () => expect.fail("written"),
        (error) => expect(error.message).to.match(/gas: missing/),
      );
      await readFile(other).then(
        () => expect.fail("a file was written"),
        (error) => expect(error.code).to.equal("ENOENT"),
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("bench CPU accounting (/proc)", function () {
  this.timeout(20_000);

  it("reads a stat line whose command name holds spaces and parentheses", function () {
    const line = "1234 (node (worker) x) S 1000 1234 1000 0 -1 4194560 100 0 0 0 250 50 7 3 20 0 11 0 100 0 0";
    expect(parseStat(1234, line)).to.deep.equal({ pid: 1234, ppid: 1000, ticks: 250 + 50 + 7 + 3 });
  });

  it("charges a Postgres backend that ended to no line twice: its earlier CPU is taken off the server's growth", function () {
    const snapshot = (at: number, serverMs: number, children: [number, string, number][]) => ({
      at,
      machine: { busy: at, total: at * 2 },
      ms: new Map([["api", at]]),
      postgresServerMs: serverMs,
      postgresChildren: new Map(children.map(([pid, line, ms]) => [pid, { line, ms }])),
    });
    // Backend 10 (the API's) had 500 ms and ended after 30 more; backend 11 (Ponder's) went from 200 to 260 ms.
    const before = snapshot(1000, 100, [
      [10, "Postgres for api", 500],
      [11, "Postgres for indexer", 200],
    ]);
    const after = snapshot(2000, 100 + 530 + 20, [[11, "Postgres for indexer", 260]]);
    const usage = StackCpuMeter.usage(before, after);
    const ms = Object.fromEntries(usage.lines.map((l) => [l.name, l.ms]));
    expect(ms).to.deep.equal({
      api: 1000,
      "Postgres for api": 0,
      "Postgres for indexer": 60,
      // The server's own 20 ms and the ended backend's last 30 ms, not its whole life's 530.
      "Postgres: server, other background and ended connections": 50,
    });
    expect(usage.stackMs).to.equal(1110);
  });

  it("counts a process with its children, one that ended included, and no more than the wall time allows", async function () {
    // A parent that burns 300 ms of CPU, then starts a child that burns 300 ms and ends, then waits to be stopped.
    // (CPU time, not wall time: on a busy machine a wall-clock loop gets only part of a core.)
    const burn = "while (process.cpuUsage().user + process.cpuUsage().system < 300_000);";
    const script =
      `${burn} const c = require("node:child_process").spawn(process.execPath, ["-e", ${JSON.stringify(burn)}], { stdio: "ignore" });` +
      ` c.on("exit", () => console.log("done")); setInterval(() => {}, 1000);`;
    const parent = spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "ignore"] });
    try {
      const meter = new StackCpuMeter(() => [{ name: "parent", pid: parent.pid! }], undefined);
      const before = meter.snapshot();
      await new Promise<void>((resolve) => parent.stdout!.on("data", (d) => String(d).includes("done") && resolve()));
      const usage = StackCpuMeter.usage(before, meter.snapshot());
      const line = usage.lines.find((l) => l.name === "parent")!;
      // Both burns (the ended child's in the parent's cutime), less the parent's start-up before the first snapshot.
      expect(line.ms).to.be.greaterThan(450);
      expect(line.stack).to.equal(true);
      expect(usage.stackMs).to.equal(line.ms);
      expect(usage.lines.find((l) => l.name === LOAD_GENERATOR)?.stack).to.equal(false);
      const cores = os.availableParallelism();
      expect(usage.lines.reduce((sum, l) => sum + l.ms, 0)).to.be.at.most(usage.wallMs * cores + 20);
      expect(usage.machineBusyCores).to.be.greaterThan(0).and.at.most(cores);
    } finally {
      parent.kill();
    }
  });
});
