/**
 * docs/benchmarks.json: the figures of `npm run bench`, with exactly the keys its readers rely on and numbers only, so
 * one run can be compared with another by a program. The shape is declared once here; `checkFigures` refuses a
 * missing, extra or non-numeric key before anything is written.
 */
import { readFile, writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";

/** docs/benchmarks.json of this checkout, wherever the command runs from. */
export const FIGURES_FILE = fileURLToPath(new URL("../../docs/benchmarks.json", import.meta.url));

/** Every key of the file, by group; each leaf is a finite number. */
export const FIGURE_KEYS = {
  writes: {
    automine: ["rawTxPerSec", "e2eReqPerSec", "cpuMsPerWrite"],
    interval1s: ["rawTxPerSec", "e2eReqPerSec", "p95Ms", "cpuMsPerWrite"],
  },
  approvals: { interval1s: ["oneDepartmentPerSec", "eightDepartmentsPerSec"] },
  reads: ["bareHttpP95Ms", "detailP95Ms", "listP95Ms", "verifyP95Ms", "apiCpuMsPerDetailRead"],
  gas: ["mint", "anchorVersion", "approval", "lifecycle"],
} as const;

type Leaves<T> = T extends readonly (infer K extends string)[]
  ? { [P in K]: number }
  : { [P in keyof T]: Leaves<T[P]> };
export type Figures = Leaves<typeof FIGURE_KEYS>;

/** The dotted path of every key, e.g. "writes.automine.rawTxPerSec". */
export function figurePaths(shape: unknown = FIGURE_KEYS, prefix = ""): string[] {
  if (Array.isArray(shape)) return shape.map((key) => `${prefix}${key}`);
  return Object.entries(shape as Record<string, unknown>).flatMap(([key, inner]) =>
    figurePaths(inner, `${prefix}${key}.`),
  );
}

/** The problems of `value` as a figures file (none: it has exactly the keys, each a finite number). */
export function figureProblems(value: unknown): string[] {
  const problems: string[] = [];
  const walk = (shape: unknown, node: unknown, prefix: string) => {
    if (typeof node !== "object" || node === null || Array.isArray(node)) {
      problems.push(`${prefix || "the file"}: expected an object`);
      return;
    }
    const record = node as Record<string, unknown>;
    const expected = Array.isArray(shape) ? (shape as string[]) : Object.keys(shape as object);
    for (const key of Object.keys(record))
      if (!expected.includes(key)) problems.push(`${prefix}${key}: not a key of the figures`);
    for (const key of expected) {
      if (!(key in record)) problems.push(`${prefix}${key}: missing`);
      else if (Array.isArray(shape)) {
        const leaf = record[key];
        if (typeof leaf !== "number" || !Number.isFinite(leaf))
          problems.push(`${prefix}${key}: ${JSON.stringify(leaf)} is not a finite number`);
      } else walk((shape as Record<string, unknown>)[key], record[key], `${prefix}${key}.`);
    }
  };
  walk(FIGURE_KEYS, value, "");
  return problems;
}

/** Rounds to what the measurement can tell (3 significant digits, whole numbers above 1,000). */
export function roundFigure(value: number): number {
  if (!Number.isFinite(value) || value === 0) return value;
  return Math.abs(value) >= 1000 ? Math.round(value) : Number(value.toPrecision(3));
}

export async function writeFigures(figures: Figures, file = FIGURES_FILE): Promise<void> {
  const problems = figureProblems(figures);
  if (problems.length > 0) throw new Error(`benchmark figures incomplete, not written:\n  ${problems.join("\n  ")}`);
  const rounded = JSON.parse(JSON.stringify(figures), (_key, v) => (typeof v === "number" ? roundFigure(v) : v));
  await writeFile(file, `${JSON.stringify(rounded, null, 2)}\n`);
}

export async function readFigures(file = FIGURES_FILE): Promise<unknown> {
  return JSON.parse(await readFile(file, "utf8"));
}
