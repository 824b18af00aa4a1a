/**
 * How the stack stops: always within one deadline, whatever hangs. The chain is saved first (a stop cut short then
 * loses no block), then every process (APIs, workers, indexer) at once, then the services they used at once (the
 * chain, saved again, and Postgres), the lock last. Each phase gets a grace from what is left of the deadline, minus
 * what the later phases need; a step must end within its grace (a process is killed when it runs out), and one
 * that does not is left behind so that the phases after it still run.
 */
import { setTimeout as sleep } from "node:timers/promises";

export type StopPhase = "save" | "processes" | "services" | "release";

/** Stops one part within `graceMs` (escalating to a kill when it must). */
export type StopStep = (graceMs: number) => Promise<void>;

/** The whole stop, lock released; the supervisor exits right after, within the 10 s a person waits for Ctrl-C. */
export const STOP_DEADLINE_MS = 9_000;

/** What a step may take beyond its grace: a process killed when its grace ran out still has to be reaped. */
const REAP_MS = 200;

/** Each phase in order, in ninths of the deadline: its longest grace, and the time kept for the phases after it. */
const PHASES: readonly { phase: StopPhase; most: number; keep: number }[] = [
  { phase: "save", most: 2, keep: 6.5 },
  { phase: "processes", most: 4, keep: 2.5 },
  { phase: "services", most: 2, keep: 0.3 },
  { phase: "release", most: 0.3, keep: 0 },
];

export class StopPlan {
  readonly #steps = new Map<StopPhase, StopStep[]>(PHASES.map(({ phase }) => [phase, []]));

  add(phase: StopPhase, step: StopStep): void {
    this.#steps.get(phase)!.push(step);
  }

  /** Runs every step added so far, phase by phase; steps added meanwhile wait for the next run. */
  async run(log: (line: string) => void, deadlineMs = STOP_DEADLINE_MS): Promise<void> {
    const deadline = Date.now() + deadlineMs;
    const ninth = deadlineMs / 9;
    for (const { phase, most, keep } of PHASES) {
      const steps = this.#steps.get(phase)!.splice(0);
      const graceMs = Math.round(Math.max(0, Math.min(most * ninth, deadline - keep * ninth - Date.now())));
      await Promise.all(steps.map((step) => within(graceMs, step(graceMs), phase, log)));
    }
  }
}

/** Waits for `work` at most `graceMs` (plus a moment for a killed process to be reaped); logs a failure or overrun. */
async function within(graceMs: number, work: Promise<void>, phase: StopPhase, log: (line: string) => void) {
  const done = work.catch((error: Error) => log(`stop: ${error.message}`)).then(() => true);
  if (!(await Promise.race([done, sleep(graceMs + REAP_MS, false, { ref: false })])))
    log(`stop: a ${phase} step overran its ${graceMs} ms`);
}
