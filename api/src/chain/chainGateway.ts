/**
 * The chain gateway: the only code that signs. Every transaction is simulated (a revert is refused before anything
 * is recorded), signed with the wallet's next nonce (by the configured TransactionSigner: the key vault or a remote
 * signer), recorded in the outbox, and only then broadcast. After a crash or a chain that lost blocks, `reconcile`
 * finishes or re-broadcasts what the outbox holds, same bytes, same hash.
 */
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { getCreateAddress, keccak256, toQuantity, type JsonRpcProvider, type TransactionReceipt } from "ethers";
import type pg from "pg";
import type { Logger } from "pino";
import { withTransaction } from "../db/transaction.ts";
import {
  ChainUnavailableError,
  ContractRevertError,
  decodeRevert,
  isConnectionError,
  NodeRefusedError,
  NotMinedInTimeError,
  revertDataOf,
} from "./chainErrors.ts";
import { NonceSequencer } from "./nonceSequencer.ts";
import { networkStatus, type NetworkStatus } from "./networkStatus.ts";
import type { FeeFields, TransactionSigner } from "./transactionSigner.ts";
import type { TxKind } from "../encoding/transactionKinds.ts";
import type { WalletStore } from "./walletStore.ts";
import { currentIdempotencyClaim, recordIdempotencyReference } from "./idempotencyClaim.ts";

export type { TxKind } from "../encoding/transactionKinds.ts";

export interface TxRequest {
  kind: TxKind;
  from: string;
  /** null: a contract creation (`data` is the creation code and constructor arguments). */
  to: string | null;
  data: string;
  requestId?: string;
}

/** Set on errors raised after the transaction was recorded: it may still be mined (reconciled later). */
export const OUTBOX_RECORDED = Symbol("outboxRecorded");
export function wasRecorded(error: unknown): boolean {
  return Boolean(error && typeof error === "object" && (error as Record<symbol, unknown>)[OUTBOX_RECORDED]);
}

export interface RecordedTx {
  id: string;
  hash: string;
  nonce: bigint;
}

export interface ConfirmedTx extends RecordedTx {
  blockNumber: number;
  gasUsed: bigint;
  receipt: TransactionReceipt;
}

export interface SendOptions {
  /** Extra writes committed atomically with the outbox record (e.g. the domain row the transaction belongs to). */
  onRecorded?: (client: pg.PoolClient, tx: RecordedTx) => Promise<void>;
  /**
   * The calldata to sign, derived again under the sending wallet's lock (across processes) from what the wallet
   * still has in flight: what a contract counts per sender, such as a department's decision nonce, can then be
   * taken by several writes of one block. The simulation ran `request.data`. May throw SameWriteInFlight.
   */
  dataUnderLock?: (client: pg.PoolClient) => Promise<string>;
  /**
   * The block whose state `request.data` was read from, where it is simulated: a write made of a value the chain
   * moves on meanwhile (a nonce another write takes) is judged on the state it was made for; the chain judges the
   * rest when it is mined.
   */
  simulateAt?: number;
}

/**
 * The same write of the same wallet is recorded and not yet mined. Simulating ours now would pass and mining it
 * would revert, so `send` waits for that one and simulates again: concurrent duplicates get the answer a second
 * call after the first would get, and send nothing.
 */
export class SameWriteInFlight extends Error {
  readonly hash: string;
  constructor(hash: string) {
    super(`the same write is in flight: ${hash}`);
    this.hash = hash;
  }
}

export interface IndexWaiter {
  waitForBlock(blockNumber: number, timeoutMs: number): Promise<boolean>;
}

export interface ChainGatewayOptions {
  pool: pg.Pool;
  provider: JsonRpcProvider;
  wallets: WalletStore;
  /** Signs every transaction; the wallets' rows keep their nonces whichever signer holds the keys. */
  signer: TransactionSigner;
  index?: IndexWaiter;
  chainId: number;
  gasMode: "market" | "free";
  receiptTimeoutMs: number;
  readYourWritesTimeoutMs: number;
  logger: Logger;
  onStatus?: (status: "PENDING" | "CONFIRMED" | "FAILED", kind: TxKind) => void;
  /**
   * Runs in the database transaction that marks a transaction CONFIRMED (from send or from reconciliation, once
   * per confirmation): what follows from a mined transaction (its events) is recorded atomically with it.
   */
  onConfirmed?: (
    client: pg.PoolClient,
    tx: { id: string; kind: TxKind; requestId: string | null; hash: string; receipt: TransactionReceipt },
  ) => Promise<void>;
  /** Runs in the database transaction that marks a transaction FAILED (mined and reverted): e.g. clean-up to schedule. */
  onFailed?: (
    client: pg.PoolClient,
    tx: { id: string; kind: TxKind; requestId: string | null; hash: string },
  ) => Promise<void>;
}

/** How often the chain's head is asked for while a write waits for its receipt: a tenth of the shortest block time
 * we run on (1 s), so a receipt is seen within 10% of a block, and an idle API asks nothing. */
const RECEIPT_POLL_MS = 100;

interface ReceiptWaiter {
  hash: string;
  /** The head at which the receipt was last asked for (-1: on registration). */
  checkedAt: number;
  done(receipt: TransactionReceipt): void;
}

const RECONCILE_LOCK = 0x7265636f6eb1n; // one reconciler at a time across processes

export class ChainGateway {
  readonly #options: ChainGatewayOptions;
  readonly #sequencer: NonceSequencer;
  #fees?: { at: number; value: FeeFields };
  #timer?: NodeJS.Timeout;
  #reconciling?: Promise<void>;
  readonly #awaited = new Set<ReceiptWaiter>();
  #polling = false;

  constructor(options: ChainGatewayOptions) {
    this.#options = options;
    this.#sequencer = new NonceSequencer(options.pool, (address, nonce, client) =>
      this.recordNonceFiller(address, nonce, client),
    );
  }

  get provider(): JsonRpcProvider {
    return this.#options.provider;
  }

  /** Simulate, record, broadcast, wait for the receipt and for the index to reach its block. */
  async send(request: TxRequest, options: SendOptions = {}): Promise<ConfirmedTx> {
    // Each wait ends with the other write mined (or NotMinedInTimeError): no round repeats without progress, and
    // no SameWriteInFlight escapes to the caller.
    for (;;) {
      try {
        return await this.#send(request, options);
      } catch (error) {
        if (!(error instanceof SameWriteInFlight)) throw error;
        await this.#receipt(error.hash, this.#options.receiptTimeoutMs);
      }
    }
  }

  async #send(request: TxRequest, options: SendOptions): Promise<ConfirmedTx> {
    const gasLimit = await this.#simulate(request, options.simulateAt);
    const fees = await this.#feeFields();
    const idempotencyClaim = currentIdempotencyClaim(); // read here: records run in the sequencer's own context
    let sent = request;

    const recorded = await this.#sequencer.run(request.from, {
      record: async ({ nonce, client }) => {
        const data = options.dataUnderLock ? await options.dataUnderLock(client) : request.data;
        const { rows } = await client.query(
          `SELECT tx_hash FROM chain_transactions WHERE status = 'PENDING' AND from_address = $1 AND to_address = $2 AND data = $3 LIMIT 1`,
          [request.from.toLowerCase(), request.to?.toLowerCase(), data],
        );
        if (rows[0]) throw new SameWriteInFlight(rows[0].tx_hash);
        sent = { ...request, data };
        const tx = await this.#record(client, sent, nonce, gasLimit, fees);
        if (options.onRecorded) await options.onRecorded(client, tx);
        // The caller's Idempotency-Key (if any) is tied to this write in the same database transaction, so after a
        // crash the key says for certain whether the write happened.
        await recordIdempotencyReference(client, idempotencyClaim, tx.id, request.requestId);
        return tx;
      },
      broadcast: async (tx) => {
        this.#options.onStatus?.("PENDING", request.kind);
        try {
          await broadcast(this.#options.provider, tx.raw);
        } catch (error) {
          if (error instanceof NodeRefusedError) {
            this.#options.onStatus?.("FAILED", request.kind);
            throw error;
          }
          // Unreachable, or no answer for it: stays PENDING and is re-broadcast later (it may still land).
          throw Object.assign(new ChainUnavailableError(error), { [OUTBOX_RECORDED]: true });
        }
      },
    });

    let receipt: TransactionReceipt;
    try {
      receipt = await this.#receipt(recorded.hash, this.#options.receiptTimeoutMs);
    } catch (error) {
      throw Object.assign(error as object, { [OUTBOX_RECORDED]: true });
    }
    // A revert here means the transaction was mined and failed: it will never land (not marked as recorded-pending).
    const confirmed = await this.#finalize(recorded.id, sent, receipt);
    await this.#readYourWrites(receipt.blockNumber, recorded.hash);
    return { ...recorded, blockNumber: receipt.blockNumber, gasUsed: receipt.gasUsed, receipt: confirmed };
  }

  /**
   * A transaction that does nothing (0 to itself) taking `nonce` of `address`, recorded with `client` (in an open
   * database transaction); the returned function sends it once that is committed. The nonce sequencer fills the
   * nonce of a refused transaction with it when a later one waits in the node's pool.
   */
  async recordNonceFiller(address: string, nonce: bigint, client: pg.PoolClient): Promise<() => Promise<void>> {
    const request: TxRequest = { kind: "NONCE_FILLER", from: address, to: address, data: "0x" };
    const { raw } = await this.#record(client, request, nonce, 21_000n, await this.#feeFields());
    this.#options.logger.warn({ address, nonce: nonce.toString() }, "filling a refused transaction's nonce");
    return () => broadcast(this.#options.provider, raw);
  }

  /** Signs `request` with `nonce` and records it in the outbox, PENDING; broadcasts = 1: it is sent after the commit. */
  async #record(client: pg.PoolClient, request: TxRequest, nonce: bigint, gasLimit: bigint, fees: FeeFields) {
    const { from, to, data } = request;
    const raw = await this.#options.signer.signTransaction({
      ...fees,
      from,
      chainId: this.#options.chainId,
      nonce,
      to,
      data,
      gasLimit,
    });
    const tx = { id: randomUUID(), hash: keccak256(raw), nonce, raw };
    // A contract creation is recorded with the address it creates (from the sender and nonce) as its `to`.
    await client.query(
      `INSERT INTO chain_transactions (id, kind, status, from_address, nonce, to_address, data, raw_tx, tx_hash, gas_limit, request_id, broadcasts)
       VALUES ($1, $2, 'PENDING', $3, $4, $5, $6, $7, $8, $9, $10, 1)`,
      [
        tx.id,
        request.kind,
        from.toLowerCase(),
        nonce.toString(),
        (to ?? getCreateAddress({ from, nonce })).toLowerCase(),
        data,
        raw,
        tx.hash,
        gasLimit.toString(),
        request.requestId ?? null,
      ],
    );
    return tx;
  }

  /** `call` on the provider; an unreachable node is ChainUnavailableError, other errors go to `otherwise`. */
  async #node<T>(
    call: (provider: JsonRpcProvider) => Promise<T>,
    otherwise = (error: unknown): unknown => error,
  ): Promise<T> {
    try {
      return await call(this.#options.provider);
    } catch (error) {
      throw isConnectionError(error) ? new ChainUnavailableError(error) : otherwise(error);
    }
  }

  /**
   * A transaction the outbox records as CONFIRMED, as `send` returned it to the request that recorded it: its
   * receipt, once the index has its block. Undefined when it is not (or no longer) confirmed. Lets a request whose
   * process died after recording its write rebuild its answer (http/idempotency.ts).
   */
  async confirmedTransaction(outboxTxId: string): Promise<ConfirmedTx | undefined> {
    const { rows } = await this.#options.pool.query(
      `SELECT tx_hash, nonce FROM chain_transactions WHERE id = $1 AND status = 'CONFIRMED'`,
      [outboxTxId],
    );
    if (!rows[0]) return undefined;
    const receipt = await this.#node((provider) => provider.getTransactionReceipt(rows[0].tx_hash));
    // A chain that lost the block: reconciliation puts the record back to PENDING and sends it again.
    if (!receipt || receipt.status !== 1) return undefined;
    await this.#readYourWrites(receipt.blockNumber, receipt.hash);
    return {
      id: outboxTxId,
      hash: receipt.hash,
      nonce: BigInt(rows[0].nonce),
      blockNumber: receipt.blockNumber,
      gasUsed: receipt.gasUsed,
      receipt,
    };
  }

  /**
   * The receipt of `hash`, asked for now and again whenever the chain's head moves (one poller for all waiting
   * writes, every RECEIPT_POLL_MS), or NotMinedInTimeError after `timeoutMs`. A node that does not answer meanwhile
   * is waited for until then: the outbox reconciles the rest. The poller is ours rather than ethers' "block" event:
   * a listener added while the provider drops its last one can be left on a stopped subscription and never hear.
   */
  #receipt(hash: string, timeoutMs: number): Promise<TransactionReceipt> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#awaited.delete(waiter);
        reject(new NotMinedInTimeError(hash));
      }, timeoutMs);
      const waiter: ReceiptWaiter = {
        hash,
        checkedAt: -1,
        done: (receipt) => {
          clearTimeout(timer);
          this.#awaited.delete(waiter);
          resolve(receipt);
        },
      };
      this.#awaited.add(waiter);
      void this.#check(waiter, -1);
      void this.#pollReceipts();
    });
  }

  async #check(waiter: ReceiptWaiter, head: number): Promise<void> {
    waiter.checkedAt = head;
    const receipt = await this.#options.provider.getTransactionReceipt(waiter.hash).catch(() => null);
    if (receipt && this.#awaited.has(waiter)) waiter.done(receipt);
  }

  async #pollReceipts(): Promise<void> {
    if (this.#polling) return;
    this.#polling = true;
    try {
      while (this.#awaited.size > 0) {
        await sleep(RECEIPT_POLL_MS);
        const head = await this.#options.provider.getBlockNumber().catch(() => -1);
        if (head < 0) continue;
        await Promise.all([...this.#awaited].filter((w) => w.checkedAt < head).map((w) => this.#check(w, head)));
      }
    } finally {
      this.#polling = false;
    }
  }

  /** Waits (bounded) for the index to reach a write's block, so what follows reads it. */
  async #readYourWrites(blockNumber: number, hash: string): Promise<void> {
    if (!this.#options.index || this.#options.readYourWritesTimeoutMs <= 0) return;
    const caughtUp = await this.#options.index.waitForBlock(blockNumber, this.#options.readYourWritesTimeoutMs);
    if (!caughtUp)
      this.#options.logger.warn({ block: blockNumber, tx: hash }, "indexer did not reach the block in time");
  }

  /** The chain as an administrator sees it (networkStatus.ts); ChainUnavailableError when the node does not answer. */
  networkStatus(): Promise<NetworkStatus> {
    return networkStatus((method, params) => this.#options.provider.send(method, params), {
      expectedChainId: this.#options.chainId,
    });
  }

  /** The chain's latest block number (the health check's probe); ChainUnavailableError when the node does not answer. */
  blockNumber(): Promise<number> {
    return this.#node((provider) => provider.getBlockNumber());
  }

  /** The latest block's time (unix seconds): what a decision's deadline is checked against. */
  async latestBlockTime(): Promise<number> {
    const block = await this.#node((provider) => provider.getBlock("latest"));
    return block?.timestamp ?? Math.floor(Date.now() / 1000);
  }

  /** Read-only contract call (e.g. a view); connection failures become ChainUnavailableError. */
  call(to: string, data: string, blockTag?: number | string): Promise<string> {
    return this.#node(
      (provider) => provider.call({ to, data, blockTag }),
      (error) => decodeRevert(revertDataOf(error)) ?? error,
    );
  }

  /**
   * Brings the outbox and the chain into agreement:
   * 1. transactions recorded as mined in blocks the chain no longer has (a local chain restarted from an older
   *    snapshot) go back to PENDING;
   * 2. every PENDING transaction is resolved from its receipt or re-broadcast (same signed bytes, same hash), in the
   *    order they were first mined, then in the order they were recorded;
   * 3. wallet nonces that fell behind the chain (the key was used elsewhere) are moved forward.
   */
  reconcile(): Promise<void> {
    this.#reconciling ??= this.#reconcile().finally(() => (this.#reconciling = undefined));
    return this.#reconciling;
  }

  startReconcileLoop(intervalMs: number): void {
    this.#timer = setInterval(() => {
      this.reconcile().catch((error) => {
        if (!isConnectionError(error)) this.#options.logger.error({ err: error }, "outbox reconciliation failed");
      });
    }, intervalMs);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    await this.#reconciling?.catch(() => {});
  }

  async #reconcile(): Promise<void> {
    const { pool, provider, logger } = this.#options;
    const lockClient = await pool.connect();
    try {
      const { rows } = await lockClient.query("SELECT pg_try_advisory_lock($1) AS ok", [RECONCILE_LOCK]);
      if (!rows[0].ok) return;
      try {
        const lost = await this.#resetLostTransactions();
        if (lost > 0)
          logger.warn({ lost }, "chain no longer has blocks the outbox recorded; re-broadcasting their transactions");

        const pending = await pool.query(
          `SELECT id, kind, from_address, to_address, data, raw_tx, tx_hash, request_id FROM chain_transactions
           WHERE status = 'PENDING' AND created_at < now() - interval '1 second' * $1
           ORDER BY block_number NULLS LAST, tx_index NULLS LAST, created_at, nonce`,
          [lost > 0 ? 0 : 2],
        );
        for (const row of pending.rows) {
          let receipt = await provider.getTransactionReceipt(row.tx_hash);
          if (!receipt) {
            let inPool = true;
            try {
              await broadcast(provider, row.raw_tx);
              await pool.query(
                `UPDATE chain_transactions SET broadcasts = broadcasts + 1, updated_at = now() WHERE id = $1`,
                [row.id],
              );
            } catch (error) {
              if (isConnectionError(error)) throw error;
              inPool = false;
              logger.warn({ tx: row.tx_hash, err: (error as Error).message }, "re-broadcast refused");
            }
            // Wait for it before sending the next one: later transactions of other wallets may depend on it. A
            // refused one will not be mined: waiting for it would only hold up start-up, 5 s per such record.
            if (inPool) receipt = await this.#receipt(row.tx_hash, 5_000).catch(() => null);
          }
          if (receipt) {
            const request: TxRequest = {
              kind: row.kind,
              from: row.from_address,
              to: row.to_address,
              data: row.data,
              requestId: row.request_id ?? undefined,
            };
            await this.#finalize(row.id, request, receipt).catch((error) => {
              if (!(error instanceof ContractRevertError)) throw error;
            });
          }
        }
        await this.#syncNonces();
      } finally {
        await lockClient.query("SELECT pg_advisory_unlock($1)", [RECONCILE_LOCK]);
      }
    } finally {
      lockClient.release();
    }
  }

  /** Marks PENDING again every transaction recorded in a block the chain no longer has. Returns how many. */
  async #resetLostTransactions(): Promise<number> {
    const { pool, provider } = this.#options;
    const head = await provider.getBlockNumber();
    // Walk recorded blocks from the newest down until one still matches the chain.
    const blocks = await pool.query(
      `SELECT DISTINCT block_number, block_hash FROM chain_transactions
       WHERE block_number IS NOT NULL AND block_hash IS NOT NULL ORDER BY block_number DESC LIMIT 10000`,
    );
    let firstLost: number | undefined;
    for (const row of blocks.rows) {
      const number = Number(row.block_number);
      const onChain = number <= head ? await provider.getBlock(number) : null;
      if (onChain && onChain.hash === row.block_hash) break;
      firstLost = number;
    }
    if (firstLost === undefined) return 0;
    const reset = await pool.query(
      `UPDATE chain_transactions SET status = 'PENDING', block_hash = NULL, gas_used = NULL, confirmed_at = NULL, updated_at = now()
       WHERE block_number >= $1`,
      [firstLost],
    );
    return reset.rowCount ?? 0;
  }

  async #syncNonces(): Promise<void> {
    const { pool, provider, wallets } = this.#options;
    for (const wallet of await wallets.all()) {
      const onChain = BigInt(await provider.getTransactionCount(wallet.address, "pending"));
      if (onChain > wallet.nextNonce) {
        await pool.query(`UPDATE wallets SET next_nonce = GREATEST(next_nonce, $2) WHERE address = $1`, [
          wallet.address.toLowerCase(),
          onChain.toString(),
        ]);
      }
    }
  }

  /** Records the receipt's outcome (once: the hooks run in the same database transaction); throws a revert's error. */
  async #finalize(id: string, request: TxRequest, receipt: TransactionReceipt): Promise<TransactionReceipt> {
    const status = receipt.status === 1 ? "CONFIRMED" : "FAILED";
    const revert = status === "FAILED" ? await this.#explainRevert(request, receipt.blockNumber) : undefined;
    const changed = await withTransaction(this.#options.pool, async (client) => {
      const { rows } = await client.query(
        `UPDATE chain_transactions SET status = $2, block_number = $3, block_hash = $4, tx_index = $5, gas_used = $6,
           confirmed_at = CASE WHEN $2 = 'CONFIRMED' THEN COALESCE(confirmed_at, now()) ELSE confirmed_at END,
           error_name = COALESCE($7, error_name), error_args = COALESCE($8, error_args), error_message = COALESCE($9, error_message),
           updated_at = now() WHERE id = $1 AND status <> $2 RETURNING request_id`,
        [
          id,
          status,
          receipt.blockNumber,
          receipt.blockHash,
          receipt.index,
          receipt.gasUsed.toString(),
          revert?.errorName ?? null,
          revert ? JSON.stringify(revert.details.args) : null,
          revert?.message ?? null,
        ],
      );
      if (rows.length === 0) return false;
      const tx = { id, kind: request.kind, requestId: rows[0].request_id, hash: receipt.hash, receipt };
      await (revert ? this.#options.onFailed?.(client, tx) : this.#options.onConfirmed?.(client, tx));
      return true;
    });
    if (changed) this.#options.onStatus?.(status, request.kind);
    if (revert) throw revert;
    return receipt;
  }

  /**
   * The custom error a mined transaction reverted with: its call replayed on the state before its block or, when it
   * passes there, on the block's own state (an earlier transaction of the same block made it fail, e.g. one that took
   * the same decision nonce).
   */
  async #explainRevert(request: TxRequest, blockNumber: number): Promise<ContractRevertError> {
    const { from, to, data } = request;
    for (const blockTag of [blockNumber - 1, blockNumber]) {
      try {
        await this.#options.provider.call({ from, to, data, blockTag });
      } catch (error) {
        const decoded = decodeRevert(revertDataOf(error));
        if (decoded) return decoded;
      }
    }
    return new ContractRevertError("TransactionReverted", [], "The transaction reverted on chain");
  }

  /** estimateGas doubles as the simulation: a revert is decoded and refused before anything is recorded. */
  async #simulate({ from, to, data }: TxRequest, blockTag?: number): Promise<bigint> {
    const estimate = await this.#node(
      (provider) =>
        blockTag === undefined
          ? provider.estimateGas({ from, to, data })
          : // ethers' estimateGas drops a block tag (and the node then estimates on its pending state, where this
            // wallet's writes still in the pool have already moved what `data` was made of): asked with the block.
            provider.send("eth_estimateGas", [{ from, to, data }, toQuantity(blockTag)]).then(BigInt),
      (error) =>
        decodeRevert(revertDataOf(error)) ??
        new ContractRevertError(
          "UnknownRevert",
          [],
          `The contract refused the operation: ${(error as Error).message}`.slice(0, 300),
        ),
    );
    // Estimated on today's state, mined on tomorrow's: an approval estimated while others are in flight may be the
    // one that completes the stage and issues the licence (≈ 30k more), a document version may invalidate more
    // approvals. Unused gas costs nothing (refunded; Besu runs free gas), running out reverts the write.
    return estimate * 2n + 150_000n;
  }

  async #feeFields(): Promise<FeeFields> {
    if (this.#options.gasMode === "free") return { type: 0, gasPrice: 0n };
    if (this.#fees && Date.now() - this.#fees.at < 1_000) return this.#fees.value;
    try {
      const block = await this.#options.provider.getBlock("latest");
      const base = block?.baseFeePerGas ?? 1_000_000_000n;
      const tip = 1_000_000n;
      const value = { type: 2 as const, maxFeePerGas: base * 2n + tip, maxPriorityFeePerGas: tip };
      this.#fees = { at: Date.now(), value };
      return value;
    } catch (error) {
      throw new ChainUnavailableError(error);
    }
  }
}

/**
 * eth_sendRawTransaction. Broadcasts started together reach the node as one JSON-RPC batch in the order they were
 * started (ethers' provider batches what is sent within its `batchStallTime`): the nonce sequencer starts a wallet's
 * batch in nonce order, the node takes a batch's items in order, and an automining node often mines them in one
 * block, which the indexer's cost per block is then shared by. Resolves when the node took it (or already had it);
 * NodeRefusedError, with the node's words, when it refused it; any other error (unreachable, no answer for this
 * item) leaves it recorded for reconciliation.
 */
export async function broadcast(provider: JsonRpcProvider, raw: string): Promise<void> {
  try {
    await provider.send("eth_sendRawTransaction", [raw]);
  } catch (error) {
    // The node's JSON-RPC error, kept by ethers as `error` (uncategorised) or `info.error` (nonce, funds, ...).
    type RpcError = { code?: unknown; message?: string };
    const e = error as { error?: RpcError; info?: { error?: RpcError } };
    const answer = [e?.info?.error, e?.error].find((candidate) => typeof candidate?.code === "number");
    if (!answer) throw error;
    const message = answer.message ?? `error ${answer.code}`;
    if (!/already known|already imported|known transaction/i.test(message)) throw new NodeRefusedError(message);
  }
}
