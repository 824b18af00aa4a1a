/**
 * Reads the first pipe table of a Markdown document: its header cells and its body rows (cells trimmed, the
 * delimiter row dropped). Enough for the tables our docs keep by hand (no pipes inside cells).
 */
export interface MarkdownTable {
  header: string[];
  rows: string[][];
}

export function parseMarkdownTable(markdown: string): MarkdownTable {
  const lines = markdown.split(/\r?\n/);
  const start = lines.findIndex((line, i) => isRow(line) && isDelimiter(lines[i + 1] ?? ""));
  if (start < 0) throw new Error("no Markdown table found");
  const header = cellsOf(lines[start]);
  const rows: string[][] = [];
  for (let i = start + 2; i < lines.length && isRow(lines[i]); i++) {
    const cells = cellsOf(lines[i]);
    if (cells.length !== header.length)
      throw new Error(`table row ${i + 1} has ${cells.length} cells, the header ${header.length}: ${lines[i]}`);
    rows.push(cells);
  }
  return { header, rows };
}

const isRow = (line: string) => line.trim().startsWith("|");
const isDelimiter = (line: string) => /^\s*\|(\s*:?-+:?\s*\|)+\s*$/.test(line);

function cellsOf(line: string): string[] {
  const trimmed = line.trim().replace(/^\|/, "").replace(/\|$/, "");
  return trimmed.split("|").map((cell) => cell.trim());
}
