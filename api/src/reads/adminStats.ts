/**
 * Platform statistics for administrators (GET /admin/stats) over whole UTC days. What falls in the period is
 * decided by when the platform recorded it (requests.created_at, chain_transactions.created_at: indexed columns);
 * durations come from the chain (block timestamps in the index). ADMIN_STATS_DEFINITIONS is also the route's
 * description.
 */
import type pg from "pg";
import { REQUEST_STATUSES, REQUEST_TYPES } from "../routes/schemas/common.ts";
import { TX_KINDS } from "./outboxReads.ts";
import { EFFECTIVE_STATUS_SQL } from "./requestReads.ts";

export const DEFAULT_PERIOD_DAYS = 30;
const DAY_MS = 86_400_000;

export const ADMIN_STATS_DEFINITIONS = [
  `The period is [startDate 00:00 UTC, endDate 24:00 UTC); endDate defaults to today (UTC), startDate to ${DEFAULT_PERIOD_DAYS - 1} days before endDate (${DEFAULT_PERIOD_DAYS} days in all). startDate after endDate is 400 VALIDATION_ERROR.`,
  "- requests: requests created in the period (and on chain), counted by their status now (EXPIRED: APPROVED past expiry) and by type; every status and type appears, with 0 when none.",
  "- blockchain: transactions the platform signed in the period (the outbox, by its recording time). totalTransactions: those mined successfully (CONFIRMED); nftsMinted: the CONFIRMED MINT_NFT ones (licence tokens created); avgGasUsed: average gas used by the CONFIRMED ones (2 decimals, 0 when none); failedTransactions (ours): reverted on chain or refused by the node.",
  "- performance: avgProcessingTimeDays is the average time from a request's first submission (first ReviewStarted) to its final decision (the licence moving from SUBMITTED to APPROVED or REJECTED), in days to 6 decimals, over the requests whose deciding transaction was recorded in the period (decidedRequests, ours); 0 when none. Reinstatement after suspension is not a decision. requestsPerDay: requests.total divided by the number of days in the period (3 decimals).",
].join("\n");

export interface StatsPeriod {
  start: string;
  end: string;
}

export interface AdminStats {
  period: StatsPeriod;
  requests: { total: number; byStatus: Record<string, number>; byType: Record<string, number> };
  blockchain: { totalTransactions: number; nftsMinted: number; avgGasUsed: number; failedTransactions: number };
  performance: { avgProcessingTimeDays: number; requestsPerDay: number; decidedRequests: number };
}

const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const round = (value: number, decimals: number) => Math.round(value * 10 ** decimals) / 10 ** decimals;

/** The period asked for, with the defaults filled in (not checked: the caller refuses start > end). */
export function statsPeriod(query: { startDate?: string; endDate?: string }, now = Date.now()): StatsPeriod {
  const end = query.endDate ?? day(now);
  const start = query.startDate ?? day(Date.parse(`${end}T00:00:00Z`) - (DEFAULT_PERIOD_DAYS - 1) * DAY_MS);
  return { start, end };
}

export async function adminStats(pool: Pick<pg.Pool, "query">, period: StatsPeriod): Promise<AdminStats> {
  const fromMs = Date.parse(`${period.start}T00:00:00Z`);
  const toMs = Date.parse(`${period.end}T00:00:00Z`) + DAY_MS;
  const from = new Date(fromMs);
  const to = new Date(toMs);
  const kinds = [...TX_KINDS];

  const [requests, transactions, decisions] = await Promise.all([
    // requests_created (created_at, id) selects the period; the licence by primary key.
    pool.query(
      `SELECT r.request_type, ${EFFECTIVE_STATUS_SQL} AS status, count(*)::int AS n
       FROM requests r JOIN index.licences l ON l.token_id = r.token_id
       WHERE r.created_at >= $1 AND r.created_at < $2
       GROUP BY 1, 2`,
      [from, to],
    ),
    // Every kind and status listed: chain_transactions_kind_status (kind, status, created_at DESC) serves the range.
    pool.query(
      `SELECT count(*) FILTER (WHERE status = 'CONFIRMED')::int AS confirmed,
              count(*) FILTER (WHERE status = 'CONFIRMED' AND kind = 'MINT_NFT')::int AS minted,
              count(*) FILTER (WHERE status = 'FAILED')::int AS failed,
              avg(gas_used) FILTER (WHERE status = 'CONFIRMED')::float8 AS avg_gas
       FROM chain_transactions
       WHERE kind = ANY($1) AND status IN ('CONFIRMED', 'FAILED') AND created_at >= $2 AND created_at < $3`,
      [kinds, from, to],
    ),
    // A final decision is made by one of our transactions: the outbox finds the period's, the licence's status
    // history (by token) the transition that transaction made.
    pool.query(
      `SELECT count(*)::int AS decided, avg(h.timestamp - p.submitted_at)::float8 AS avg_seconds
       FROM chain_transactions t
       JOIN requests r ON r.id = t.request_id
       JOIN index.licence_status_history h ON h.token_id = r.token_id AND h.tx_hash = t.tx_hash
       JOIN index.request_progress p ON p.token_id = r.token_id
       WHERE t.kind = ANY($1) AND t.status = 'CONFIRMED' AND t.created_at >= $2 AND t.created_at < $3
         AND h.from_status = 'SUBMITTED' AND h.to_status IN ('APPROVED', 'REJECTED') AND p.submitted_at > 0`,
      [kinds, from, to],
    ),
  ]);

  const byStatus: Record<string, number> = Object.fromEntries(REQUEST_STATUSES.map((s) => [s, 0]));
  const byType: Record<string, number> = Object.fromEntries(REQUEST_TYPES.map((t) => [t, 0]));
  let total = 0;
  for (const row of requests.rows) {
    byStatus[row.status] = (byStatus[row.status] ?? 0) + row.n;
    byType[row.request_type] = (byType[row.request_type] ?? 0) + row.n;
    total += row.n;
  }
  const tx = transactions.rows[0];
  const decided = decisions.rows[0];
  const days = Math.round((toMs - fromMs) / DAY_MS);
  return {
    period,
    requests: { total, byStatus, byType },
    blockchain: {
      totalTransactions: tx.confirmed,
      nftsMinted: tx.minted,
      avgGasUsed: round(tx.avg_gas ?? 0, 2),
      failedTransactions: tx.failed,
    },
    performance: {
      avgProcessingTimeDays: round((decided.avg_seconds ?? 0) / 86_400, 6),
      requestsPerDay: round(total / days, 3),
      decidedRequests: decided.decided,
    },
  };
}
