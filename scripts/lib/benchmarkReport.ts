/**
 * Writes one section of docs/benchmarks.md between `<!-- NAME:start -->` and `<!-- NAME:end -->`, so each
 * benchmark script owns its section and re-running one leaves the others alone.
 */
import { readFile, writeFile } from "node:fs/promises";
import os from "node:os";

export const BENCHMARKS_FILE = "docs/benchmarks.md";

export async function writeBenchmarkSection(name: string, body: string): Promise<void> {
  const start = `<!-- ${name}:start -->`;
  const end = `<!-- ${name}:end -->`;
  let text: string;
  try {
    text = await readFile(BENCHMARKS_FILE, "utf8");
  } catch {
    text = "# Benchmarks\n\nEvery figure here is written by the script named in its section.\n";
  }
  const section = `${start}\n${body.trim()}\n${end}`;
  const at = text.indexOf(start);
  const until = text.indexOf(end);
  text =
    at >= 0 && until > at
      ? text.slice(0, at) + section + text.slice(until + end.length)
      : `${text.trimEnd()}\n\n${section}\n`;
  await writeFile(BENCHMARKS_FILE, text);
}

/** One line naming the machine a figure was measured on. */
export function machineLine(): string {
  const cpu = os.cpus()[0]?.model ?? "unknown CPU";
  return `${os.cpus().length} × ${cpu}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}, ${os.platform()} ${os.release()}`;
}
