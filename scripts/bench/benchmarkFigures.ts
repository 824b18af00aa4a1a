/**
 * docs/benchmarks.json: the figures of `npm run bench`, with exactly the keys its readers rely on and numbers only, so
 * one run can be compared with another by a program. The schema refuses a missing, extra or non-numeric key before
 * anything is written.
 */
import { readFile, writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { z } from "zod/v4";

/** docs/benchmarks.json of this checkout, wherever the command runs from. */
export const FIGURES_FILE = fileURLToPath(new URL("../../docs/benchmarks.json", import.meta.url));

const numbers = <K extends string>(...keys: K[]) =>
  z.strictObject(Object.fromEntries(keys.map((k) => [k, z.number()])) as Record<K, z.ZodNumber>);
export const FiguresSchema = z.strictObject({
  writes: z.strictObject({
    automine: numbers("rawTxPerSec", "e2eReqPerSec", "cpuMsPerWrite"),
    interval1s: numbers("rawTxPerSec", "e2eReqPerSec", "p95Ms", "cpuMsPerWrite"),
  }),
  approvals: z.strictObject({
    interval1s: numbers("oneDepartmentPerSec", "eightDepartmentsPerSec", "cpuMsPerApproval"),
  }),
  reads: numbers(
    "bareHttpP95Ms",
    "detailP95Ms",
    "listP95Ms",
    "verifyP95Ms",
    "apiCpuMsPerDetailRead",
    "stackCpuMsPerDetailRead",
  ),
  gas: numbers("mint", "anchorVersion", "approval", "lifecycle"),
});
export type Figures = z.infer<typeof FiguresSchema>;

/** The problems of `value` as a figures file, one line each (none: exactly the keys, each a finite number). */
export function figureProblems(value: unknown): string[] {
  const parsed = FiguresSchema.safeParse(value);
  return parsed.success ? [] : parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
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
