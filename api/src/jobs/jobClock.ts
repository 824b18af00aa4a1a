/**
 * The clock jobs schedule with. Production runs at scale 1; tests accelerate it (JOB_TIME_SCALE) so the real
 * retry schedule (+1 min … +24 h) runs in seconds, with every delay shrunk by the same factor.
 */
export interface JobClock {
  now(): Date;
  /** A delay of `ms` platform milliseconds, in real milliseconds. */
  scaled(ms: number): number;
}

export function jobClock(scale = 1, now: () => Date = () => new Date()): JobClock {
  return { now, scaled: (ms) => Math.max(1, Math.round(ms * scale)) };
}
