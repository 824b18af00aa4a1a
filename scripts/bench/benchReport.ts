/**
 * The markdown of the benchmarks: each script owns a section of docs/benchmarks.md between `<!-- NAME:start -->`
 * and `<!-- NAME:end -->` (re-running one leaves the others alone); for `npm run bench`, where the CPU went per
 * operation, process by process, in every measured phase. Pure formatting: the measurements are the phases'.
 */
import { readFile, writeFile } from "node:fs/promises";
import os from "node:os";
import type { Phase } from "./phases.ts";

export const BENCHMARKS_FILE = "docs/benchmarks.md";

export async function writeBenchmarkSection(name: string, body: string): Promise<void> {
  const [start, end] = [`<!-- ${name}:start -->`, `<!-- ${name}:end -->`];
  const text = await readFile(BENCHMARKS_FILE, "utf8").catch(
    () => "# Benchmarks\n\nEvery figure here is written by the script named in its section.\n",
  );
  const section = `${start}\n${body.trim()}\n${end}`;
  const [at, until] = [text.indexOf(start), text.indexOf(end)];
  await writeFile(
    BENCHMARKS_FILE,
    at >= 0 && until > at
      ? text.slice(0, at) + section + text.slice(until + end.length)
      : `${text.trimEnd()}\n\n${section}\n`,
  );
}

/** One line naming the machine a figure was measured on. */
export function machineLine(): string {
  const cpu = os.cpus()[0]?.model ?? "unknown CPU";
  return `${os.cpus().length} × ${cpu}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}, ${os.platform()} ${os.release()}`;
}

/** A markdown table: a header row, then the rows. */
export const table = (header: string[], rows: string[][], align = header.map(() => "---")) =>
  [header, align, ...rows].map((cells) => `| ${cells.join(" | ")} |`);

export const fixed = (value: number, digits = 1) => (Number.isFinite(value) ? value.toFixed(digits) : "—");
export const ratio = (value: number, reference: number) => (reference > 0 ? value / reference : Number.NaN);
export const mark = (ok: boolean) => (ok ? "✅" : "❌");

/** Lines of the API processes themselves (not their Postgres backends): "api", "api-2", … */
export const isApiProcess = (line: string) => /^api(-\d+)?$/.test(line);

/** CPU-ms per operation of the lines `line` picks (default: the whole stack). */
export function cpuPerOperation(phase: Phase, line?: (name: string) => boolean): number {
  const ms = line ? phase.cpu.lines.filter((l) => line(l.name)).reduce((sum, l) => sum + l.ms, 0) : phase.cpu.stackMs;
  return ms / Math.max(1, phase.operations);
}

const measuredCores = (p: Phase) => p.cpu.lines.reduce((sum, l) => sum + l.ms, 0) / p.cpu.wallMs;

/**
 * Checks that make a figure believable whatever the machine: the stack used some CPU, and the CPU of the stack and
 * the load generator over the wall time is not more than the cores the whole machine had busy (it is part of them).
 */
export function sanityProblems(phase: Phase, cores: number): string[] {
  const { cpu, title } = phase;
  const problems: string[] = [];
  if (!(cpu.stackMs > 0)) problems.push(`${title}: the stack used no CPU (processes not found?)`);
  // Clock ticks are 10 ms per process: allow a little over.
  if (measuredCores(phase) > Math.min(cores, cpu.machineBusyCores) * 1.1 + 0.05)
    problems.push(
      `${title}: ${fixed(measuredCores(phase), 2)} cores counted, more than the ${fixed(cpu.machineBusyCores, 2)} the machine had busy`,
    );
  return problems;
}

/** The per-process table: one row per process line, one column per phase, CPU-ms per operation. */
export function cpuTable(phases: Phase[]): string[] {
  // Lines that used no measurable CPU in any phase (e.g. an idle Postgres background process) are left out.
  const names = [...new Set(phases.flatMap((p) => p.cpu.lines.filter((l) => l.stack && l.ms > 0).map((l) => l.name)))];
  const of = (p: Phase, name: string) => cpuPerOperation(p, (n) => n === name);
  // Heaviest first, by their sum over the phases' per-operation figures.
  names.sort((a, b) => phases.reduce((s, p) => s + of(p, b) - of(p, a), 0));
  const cells = (label: string, cell: (p: Phase, digits: number) => string) => [
    label,
    ...phases.map((p) => cell(p, p.unit === "read" ? 3 : 1)),
  ];
  return table(
    ["CPU-ms per operation", ...phases.map((p) => `${p.title} (per ${p.unit})`)],
    [
      ...names.map((name) => cells(name, (p, d) => fixed(of(p, name), d))),
      cells("**stack total**", (p, d) => `**${fixed(cpuPerOperation(p), d)}**`),
      cells("of which the stack's cost at rest (idle CPU-ms/s × wall time)", (p, d) =>
        p.idleMsPerSecond === undefined || p.unit === "s"
          ? ""
          : fixed((p.idleMsPerSecond * p.cpu.wallMs) / 1000 / Math.max(1, p.operations), d),
      ),
      cells("load generator (the bench process, not counted)", (p, d) =>
        fixed(
          cpuPerOperation(p, (n) => !p.cpu.lines.find((l) => l.name === n)?.stack),
          d,
        ),
      ),
      cells("indexer (Ponder) with its Postgres, per block", (p) => {
        const ponder = p.cpu.lines.filter((l) => /indexer/.test(l.name)).reduce((sum, l) => sum + l.ms, 0);
        return p.cpu.blocks ? fixed(ponder / p.cpu.blocks, 1) : "";
      }),
      cells("operations measured", (p) => String(p.operations)),
      cells("blocks mined", (p) => (p.cpu.blocks === undefined ? "" : String(p.cpu.blocks))),
      cells("wall time (s)", (p) => fixed(p.cpu.wallMs / 1000, 1)),
      cells("cores busy: stack + load generator", (p) => fixed(measuredCores(p), 2)),
      cells("cores busy: whole machine (every user)", (p) => fixed(p.cpu.machineBusyCores, 2)),
    ],
    ["---", ...phases.map(() => "---:")],
  );
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
  if (lines.length === 0) return [];
  return [
    "Postgres processes that ended during a phase (counted on their line above until their last sample, every",
    "200 ms; one that lived less than that may be missed):",
    "",
    ...lines,
  ];
}
