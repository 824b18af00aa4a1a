import { expect } from "chai";
import { STOP_DEADLINE_MS, StopPlan, type StopPhase } from "../../scripts/stack/stopPlan.ts";

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

describe("the stack's stop plan (scripts/stack/stopPlan.ts)", function () {
  it("saves first, then stops the processes together, then the services together, the lock last", async function () {
    const plan = new StopPlan();
    const events: string[] = [];
    const step = (name: string, ms: number) => async () => {
      events.push(`${name} start`);
      await sleep(ms);
      events.push(`${name} end`);
    };
    plan.add("release", step("lock", 0));
    plan.add("services", step("postgres", 30));
    plan.add("services", step("chain", 10));
    plan.add("processes", step("api", 60));
    plan.add("processes", step("indexer", 20));
    plan.add("save", step("snapshot", 10));
    await plan.run(() => {});
    expect(events).to.deep.equal([
      "snapshot start",
      "snapshot end",
      "api start",
      "indexer start",
      "indexer end",
      "api end",
      "postgres start",
      "chain start",
      "chain end",
      "postgres end",
      "lock start",
      "lock end",
    ]);
  });

  it("gives each phase its share of the 9 s deadline: 2 s to save, 4 s to the processes, 2 s to the services", async function () {
    const plan = new StopPlan();
    const graces: Partial<Record<StopPhase, number>> = {};
    for (const phase of ["save", "processes", "services", "release"] as const)
      plan.add(phase, async (graceMs) => void (graces[phase] = graceMs));
    await plan.run(() => {});
    expect(STOP_DEADLINE_MS).to.equal(9_000);
    expect(graces.save).to.equal(2_000);
    expect(graces.processes).to.equal(4_000);
    expect(graces.services).to.equal(2_000);
    expect(graces.release).to.be.within(250, 300);
  });

  it("ends within its deadline when a step hangs, and still runs the later phases", async function () {
    const plan = new StopPlan();
    const logged: string[] = [];
    let released = false;
    plan.add("processes", () => new Promise<void>(() => {})); // never ends
    plan.add("release", async () => void (released = true));
    const started = Date.now();
    await plan.run((line) => logged.push(line), 900);
    // The deadline, plus the moment allowed per phase to reap a killed process.
    expect(Date.now() - started).to.be.below(900 + 4 * 200 + 100);
    expect(released).to.equal(true);
    expect(logged).to.deep.equal(["stop: a processes step overran its 400 ms"]);
  });

  it("logs a step that fails and goes on", async function () {
    const plan = new StopPlan();
    const logged: string[] = [];
    let released = false;
    plan.add("services", async () => {
      throw new Error("pool already ended");
    });
    plan.add("release", async () => void (released = true));
    await plan.run((line) => logged.push(line));
    expect(logged).to.deep.equal(["stop: pool already ended"]);
    expect(released).to.equal(true);
  });
});
