/**
 * Several reads in one round trip: each part's SELECT becomes a JSON array column of one statement (prepared like
 * every pool query). On this machine a query's round trip (a socket write and wake-up on each side) costs more than
 * the indexed lookups themselves, so a page that needs ten small reads asks once.
 *
 * Rows come back as JSON: numbers as numbers, timestamps as ISO strings (callers that need a Date convert), jsonb
 * as objects. Each part numbers its own parameters from $1; they are renumbered here.
 */
import type pg from "pg";

export interface ReadPart {
  sql: string;
  params: unknown[];
}

export type Rows = Record<string, any>[];

export async function readTogether<K extends string>(
  pool: pg.Pool,
  parts: Record<K, ReadPart>,
): Promise<Record<K, Rows>> {
  const names = Object.keys(parts) as K[];
  const params: unknown[] = [];
  const columns = names.map((name, i) => {
    const part = parts[name];
    const offset = params.length;
    params.push(...part.params);
    const sql = part.sql.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + offset}`);
    return `(SELECT coalesce(json_agg(t), '[]'::json) FROM (${sql}) t) AS c${i}`;
  });
  const { rows } = await pool.query(`SELECT ${columns.join(", ")}`, params);
  return Object.fromEntries(names.map((name, i) => [name, rows[0][`c${i}`] as Rows])) as Record<K, Rows>;
}

/** A timestamp from a row read either way (a Date from a plain query, an ISO string through readTogether). */
export const asDate = (value: unknown): Date => (value instanceof Date ? value : new Date(value as string));
