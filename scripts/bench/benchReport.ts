/**
 * The markdown of `npm run bench`: the figures beside their references and goals, and where the CPU went per
 * operation, process by process, in every measured phase. Pure formatting: the measurements are bench.ts's.
 */
import type { CpuUsage } from "./processCpu.ts";

export interface Phase {
  /** Column title, e.g. "automine: POST /requests". */
  title: string;
  /** What one operation is ("write", "read", "s" for idle seconds). */
  unit: string;
  operations: number;
  cpu: CpuUsage;
  /** The same stack's CPU-ms per second at rest: the part of a figure that is not caused by the operations. */
  idleMsPerSecond?: number;
}

const fixed = (value: number, digits = 1) => (Number.isFinite(value) ? value.toFixed(digits) : "—");

/** Lines of the API processes themselves (not their Postgres backends): "api", "api-2", … */
export const isApiProcess = (line: string) => /^api(-\d+)?$/.test(line);

export function cpuPerOperation(phase: Phase, line?: (name: string) => boolean): number {
  const ms = line ? phase.cpu.lines.filter((l) => line(l.name)).reduce((sum, l) => sum + l.ms, 0) : phase.cpu.stackMs;
  return ms / Math.max(1, phase.operations);
}

/**
 * Checks that make a figure believable whatever the machine: the stack used some CPU, and the CPU of the stack and
 * the load generator over the wall time is not more than the cores the whole machine had busy (it is part of them).
 */
export function sanityProblems(phase: Phase, cores: number): string[] {
  const problems: string[] = [];
  const { cpu } = phase;
  const measuredCores = cpu.lines.reduce((sum, l) => sum + l.ms, 0) / cpu.wallMs;
  if (!(cpu.stackMs > 0)) problems.push(`${phase.title}: the stack used no CPU (processes not found?)`);
  // Clock ticks are 10 ms per process: allow a little over.
  if (measuredCores > Math.min(cores, cpu.machineBusyCores) * 1.1 + 0.05) {
    problems.push(
      `${phase.title}: ${fixed(measuredCores, 2)} cores counted, more than the ${fixed(cpu.machineBusyCores, 2)} the machine had busy`,
    );
  }
  return problems;
}

/** The per-process table: one row per process line, one column per phase, CPU-ms per operation. */
export function cpuTable(phases: Phase[]): string[] {
  // Lines that used no measurable CPU in any phase (e.g. an idle Postgres background process) are left out.
  const names = [...new Set(phases.flatMap((p) => p.cpu.lines.filter((l) => l.stack && l.ms > 0).map((l) => l.name)))];
  // Heaviest first, by their sum over the phases' per-operation figures.
  const weight = (name: string) => phases.reduce((sum, p) => sum + cpuPerOperation(p, (n) => n === name), 0);
  names.sort((a, b) => weight(b) - weight(a));
  const row = (label: string, cell: (p: Phase) => string) => `| ${label} | ${phases.map(cell).join(" | ")} |`;
  const digits = (p: Phase) => (p.unit === "read" ? 3 : 1);
  return [
    `| CPU-ms per operation | ${phases.map((p) => `${p.title} (per ${p.unit})`).join(" | ")} |`,
    `|---|${phases.map(() => "---:").join("|")}|`,
    ...names.map((name) =>
      row(name, (p) =>
        fixed(
          cpuPerOperation(p, (n) => n === name),
          digits(p),
        ),
      ),
    ),
    row("**stack total**", (p) => `**${fixed(cpuPerOperation(p), digits(p))}**`),
    row("of which the stack's cost at rest (idle CPU-ms/s × wall time)", (p) =>
      p.idleMsPerSecond === undefined || p.unit === "s"
        ? ""
        : fixed((p.idleMsPerSecond * p.cpu.wallMs) / 1000 / Math.max(1, p.operations), digits(p)),
    ),
    row("load generator (the bench process, not counted)", (p) =>
      fixed(
        cpuPerOperation(p, (n) => !p.cpu.lines.find((l) => l.name === n)?.stack),
        digits(p),
      ),
    ),
    row("indexer (Ponder) with its Postgres, per block", (p) => {
      const ponder = p.cpu.lines.filter((l) => /indexer/.test(l.name)).reduce((sum, l) => sum + l.ms, 0);
      return p.cpu.blocks ? fixed(ponder / p.cpu.blocks, 1) : "";
    }),
    row("operations measured", (p) => String(p.operations)),
    row("blocks mined", (p) => (p.cpu.blocks === undefined ? "" : String(p.cpu.blocks))),
    row("wall time (s)", (p) => fixed(p.cpu.wallMs / 1000, 1)),
    row("cores busy: stack + load generator", (p) =>
      fixed(p.cpu.lines.reduce((s, l) => s + l.ms, 0) / p.cpu.wallMs, 2),
    ),
    row("cores busy: whole machine (every user)", (p) => fixed(p.cpu.machineBusyCores, 2)),
  ];
}

/** Postgres processes that came and went during each phase (parallel workers, short connections), if any. */
export function endedProcesses(phases: Phase[]): string[] {
  const lines = phases
    .filter((p) => Object.keys(p.cpu.ended).length > 0)
    .map(
      (p) =>
        `- ${p.title}: ${Object.entries(p.cpu.ended)
          .map(([label, n]) => `${label} × ${n}`)
          .join(", ")}`,
    );
  return lines.length === 0
    ? []
    : [
        "Postgres processes that ended during a phase (counted on their line above until their last sample, every",
        "200 ms; one that lived less than that may be missed):",
        "",
        ...lines,
      ];
}

export const ratio = (value: number, reference: number) => (reference > 0 ? value / reference : Number.NaN);
export const mark = (ok: boolean) => (ok ? "✅" : "❌");
export { fixed };
