/**
 * The bench's figures file and its CPU accounting, without a stack: the committed docs/benchmarks.json fits the
 * schema, the writer refuses anything else, and the meter charges a process tree's CPU, a child that ended
 * included, to the named process above it without counting more than the wall time allows.
 */
import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { figureProblems, readFigures, writeFigures, type Figures } from "../../scripts/bench/benchmarkFigures.ts";
import { LOAD_GENERATOR, measureCpu } from "../../scripts/bench/processCpu.ts";

const complete = (): Figures => ({
  writes: {
    automine: { rawTxPerSec: 500, e2eReqPerSec: 40, cpuMsPerWrite: 45 },
    interval1s: { rawTxPerSec: 450, e2eReqPerSec: 40, p95Ms: 1400, cpuMsPerWrite: 30 },
  },
  approvals: { interval1s: { oneDepartmentPerSec: 4, eightDepartmentsPerSec: 20, cpuMsPerApproval: 66.2 } },
  reads: {
    bareHttpP95Ms: 17.5,
    detailP95Ms: 73.21,
    listP95Ms: 115,
    verifyP95Ms: 87,
    apiCpuMsPerDetailRead: 1.1234,
    stackCpuMsPerDetailRead: 3.3,
  },
  gas: { mint: 78061, anchorVersion: 58093, approval: 50627, lifecycle: 609926 },
});

describe("bench figures (docs/benchmarks.json)", function () {
  it("the committed docs/benchmarks.json has exactly the figures' keys, each a finite number", async function () {
    expect(figureProblems(await readFigures())).to.deep.equal([]);
  });

  it("names a missing key, an extra key and a value that is not a finite number", function () {
    const figures = complete() as any;
    delete figures.reads.listP95Ms;
    figures.gas.extra = 1;
    figures.writes.automine.cpuMsPerWrite = "45";
    figures.approvals.interval1s.oneDepartmentPerSec = Number.NaN;
    const problems = figureProblems(figures);
    expect(problems).to.have.length(4);
    for (const where of ["reads.listP95Ms", "gas: ", "writes.automine.cpuMsPerWrite", "oneDepartmentPerSec"])
      expect(problems.some((p) => p.includes(where))).to.equal(true, where);
    expect(problems.join("\n")).to.include('"extra"');
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
        (error) => expect(error.message).to.match(/gas: /),
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

describe("bench CPU accounting", function () {
  this.timeout(20_000);

  it("charges a process and its children, one that ended included, to its name, within the wall time", async function () {
    // A parent that burns 300 ms of CPU, then starts a child that burns 300 ms and ends, then waits to be stopped.
    // (CPU time, not wall time: on a busy machine a wall-clock loop gets only part of a core.)
    const burn = "while (process.cpuUsage().user + process.cpuUsage().system < 300_000);";
    const script =
      `${burn} const c = require("node:child_process").spawn(process.execPath, ["-e", ${JSON.stringify(burn)}], { stdio: "ignore" });` +
      ` c.on("exit", () => console.log("done")); setInterval(() => {}, 1000);`;
    const parent = spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "ignore"] });
    try {
      const meter = { named: () => [{ name: "parent", pid: parent.pid! }], sampleMs: 20 };
      const done = new Promise<void>((resolve) =>
        parent.stdout!.on("data", (d) => String(d).includes("done") && resolve()),
      );
      const { cpu } = await measureCpu(meter, () => done);
      const line = cpu.lines.find((l) => l.name === "parent")!;
      // Both burns, less the parent's start-up before the first sample and the child's last 20 ms at most.
      expect(line.ms).to.be.greaterThan(400);
      expect(line.stack).to.equal(true);
      expect(cpu.stackMs).to.equal(line.ms);
      expect(cpu.lines.find((l) => l.name === LOAD_GENERATOR)?.stack).to.equal(false);
      const cores = os.availableParallelism();
      expect(cpu.lines.reduce((sum, l) => sum + l.ms, 0)).to.be.at.most(cpu.wallMs * cores + 20);
      expect(cpu.machineBusyCores).to.be.greaterThan(0).and.at.most(cores);
    } finally {
      parent.kill();
    }
  });
});
