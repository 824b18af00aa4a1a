/**
 * The transaction outbox (`chain_transactions`) as administrators read it: every transaction the platform signed,
 * newest first, filtered by kind and status. The outbox, not the index, because it also holds what never made it
 * into a block (pending, refused by the node) and the decoded error of what reverted.
 */
import { getAddress } from "ethers";
import type pg from "pg";
import { TX_KINDS, type TxKind } from "../encoding/transactionKinds.ts";

export { TX_KINDS };

export const TX_STATUSES = ["PENDING", "CONFIRMED", "FAILED"] as const;

export interface OutboxQuery {
  txType?: TxKind;
  status?: (typeof TX_STATUSES)[number];
  page: number;
  limit: number;
}

export interface BlockchainTransaction {
  transactionId: string;
  transactionHash: string;
  txType: TxKind;
  status: (typeof TX_STATUSES)[number];
  from: string;
  to: string;
  nonce: number;
  blockNumber: number | null;
  gasUsed: number | null;
  error: { name: string | null; message: string | null; args: unknown[] } | null;
  requestId: string | null;
  broadcasts: number;
  createdAt: string;
  confirmedAt: string | null;
}

/** How many outbox transactions are in each status (0 for a status none is in). */
export async function outboxCountsByStatus(
  pool: Pick<pg.Pool, "query">,
): Promise<Record<(typeof TX_STATUSES)[number], number>> {
  const { rows } = await pool.query(`SELECT status, count(*)::int AS n FROM chain_transactions GROUP BY status`);
  return Object.fromEntries(
    TX_STATUSES.map((status) => [status, rows.find((r) => r.status === status)?.n ?? 0]),
  ) as Record<(typeof TX_STATUSES)[number], number>;
}

export async function listTransactions(pool: Pick<pg.Pool, "query">, query: OutboxQuery) {
  const where: string[] = [];
  const params: unknown[] = [];
  if (query.txType) where.push(`kind = $${params.push(query.txType)}`);
  if (query.status) where.push(`status = $${params.push(query.status)}`);
  const whereSql = where.length ? `WHERE ${where.join(" AND ")}` : "";
  // With a kind, chain_transactions_kind_status (kind, status, created_at DESC) serves filter and order.
  const [page, count] = await Promise.all([
    pool.query(
      `SELECT id, tx_hash, kind, status, from_address, to_address, nonce, block_number, gas_used, error_name, error_args, error_message,
              request_id, broadcasts, created_at, confirmed_at
       FROM chain_transactions ${whereSql}
       ORDER BY created_at DESC, id LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
      [...params, query.limit, (query.page - 1) * query.limit],
    ),
    pool.query(`SELECT count(*)::int AS n FROM chain_transactions ${whereSql}`, params),
  ]);
  const total = count.rows[0].n as number;
  return {
    transactions: page.rows.map(toTransaction),
    pagination: { page: query.page, limit: query.limit, total, totalPages: Math.ceil(total / query.limit) },
  };
}

function toTransaction(row: Record<string, any>): BlockchainTransaction {
  const failed = row.error_name !== null || row.error_message !== null;
  return {
    transactionId: row.id,
    transactionHash: row.tx_hash,
    txType: row.kind,
    status: row.status,
    from: getAddress(row.from_address),
    to: getAddress(row.to_address),
    nonce: Number(row.nonce),
    blockNumber: row.block_number === null ? null : Number(row.block_number),
    gasUsed: row.gas_used === null ? null : Number(row.gas_used),
    error: failed ? { name: row.error_name, message: row.error_message, args: row.error_args ?? [] } : null,
    requestId: row.request_id,
    broadcasts: row.broadcasts,
    createdAt: row.created_at.toISOString(),
    confirmedAt: row.confirmed_at?.toISOString() ?? null,
  };
}

/** The calldata of a wallet's transactions of these kinds that are recorded and not yet mined, oldest first. */
export async function pendingCallsOf(
  client: Pick<pg.PoolClient, "query">,
  from: string,
  kinds: readonly TxKind[],
): Promise<{ hash: string; data: string }[]> {
  const { rows } = await client.query(
    `SELECT tx_hash AS hash, data FROM chain_transactions
      WHERE status = 'PENDING' AND from_address = $1 AND kind = ANY($2) ORDER BY nonce`,
    [from.toLowerCase(), kinds],
  );
  return rows;
}

/** Whether a transaction of `kind` to `to` whose calldata starts with `dataPrefix` is still PENDING in the outbox. */
export async function hasPendingTransaction(
  db: Pick<pg.Pool, "query">,
  kind: TxKind,
  to: string,
  dataPrefix: string,
): Promise<boolean> {
  const { rows } = await db.query(
    `SELECT 1 FROM chain_transactions WHERE status = 'PENDING' AND kind = $1 AND to_address = $2 AND starts_with(data, $3) LIMIT 1`,
    [kind, to.toLowerCase(), dataPrefix],
  );
  return rows.length > 0;
}
