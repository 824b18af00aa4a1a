/**
 * Idempotency-Key for POST and PUT, scoped to the caller: the same key with the same request within 24 h replays
 * the stored response and does nothing else (no second transaction); the same key with a different request → 422;
 * while the first is still running → 409.
 *
 * Crash safety (a retried request gets its original answer, whatever crashed in between):
 * - the running process holds a lease on the key (renewed while it runs); a key whose lease passed belongs to a
 *   process that died;
 * - the key is tied to the request's write in the same database transaction as the outbox record
 *   (recordIdempotencyReference, called by the chain gateway), so after a crash the key says for certain whether the
 *   write happened: recorded → once its transaction is mined the route rebuilds the original answer (or 409 while it
 *   is pending); nothing recorded → the operation runs again;
 * - the rebuild is one mechanism for every route that writes to the chain: the store turns the recorded write into
 *   the confirmed transaction the handler's `gateway.send` returned (its receipt, the index waited for to its block)
 *   and the route answers from it with the same function its use case answers with (routeTable.ts
 *   `recoverIdempotent`, required of such routes);
 * - a failure to save the answer, or a 5xx after the write was recorded, never frees the key: the retry takes the
 *   recovery path, so it cannot mint twice;
 * - 409 answers (concurrency: in progress, workflow busy, concurrent update) and 5xx are not stored: without a
 *   recorded write a retry runs again; with one (e.g. a receipt timeout) it gets the outcome once it is known;
 * - the fingerprint covers the method, the full target (path and query string) and the exact raw body;
 * - keys older than the window are purged on a schedule.
 */
import { createHash } from "node:crypto";
import type pg from "pg";
import { wasRecorded, type ConfirmedTx } from "../chain/chainGateway.ts";
import { AppError, conflict, validationFailed } from "../domain/errors.ts";
import { runWithIdempotencyClaim } from "../chain/idempotencyClaim.ts";
import { answerOfKnownError } from "./errorKinds.ts";
import type { HandlerResult } from "./routeTable.ts";

export const IDEMPOTENCY_WINDOW_HOURS = 24;
/** How long a running request's claim on its key lasts without renewal; renewed every third of it. */
export const IDEMPOTENCY_LEASE_MS = 15_000;

/** An Idempotency-Key as its schema has it: 1 to 255 visible ASCII characters. */
export function isIdempotencyKey(key: string): boolean {
  return /^[\x21-\x7e]{1,255}$/.test(key);
}

/** method, full target (path and query string) and the exact bytes of the body (or, for uploads, their digest). */
export function fingerprint(method: string, target: string, rawBody: string | Buffer): string {
  return createHash("sha256").update(`${method} ${target}\n`).update(rawBody).digest("hex");
}

/** What a write recorded for its key (the outbox record and the request it belongs to). */
export interface RecordedWrite {
  outboxTxId: string;
  requestId: string | null;
  transactionHash: string;
  status: "PENDING" | "CONFIRMED" | "FAILED";
}

/** A recorded write once mined: with the transaction as `gateway.send` returned it to the request that made it. */
export interface MinedWrite extends RecordedWrite {
  tx: ConfirmedTx;
}

/** Rebuilds a route's original answer from its recorded, mined write (after the process that ran it died). */
export type Recover = (write: MinedWrite) => Promise<HandlerResult>;

/** The confirmed transaction of an outbox record (ChainGateway.confirmedTransaction), or undefined. */
export type ConfirmedLookup = (outboxTxId: string) => Promise<ConfirmedTx | undefined>;

const inProgress = () =>
  conflict("IDEMPOTENCY_IN_PROGRESS", "A request with this Idempotency-Key is still being processed; retry shortly");
const waitingForChain = (transactionHash: string) =>
  conflict("IDEMPOTENCY_IN_PROGRESS", "The request's write is recorded and waiting for the chain; retry shortly", {
    transactionHash,
  });

export class IdempotencyStore {
  readonly #pool: pg.Pool;
  readonly #confirmed?: ConfirmedLookup;
  readonly #timer?: NodeJS.Timeout;

  /** `confirmed` finds a recorded write's mined transaction; without it a recovered key answers 409 OUTCOME_RECORDED. */
  constructor(pool: pg.Pool, options: { purgeEveryMs?: number; confirmed?: ConfirmedLookup } = {}) {
    this.#pool = pool;
    this.#confirmed = options.confirmed;
    if (options.purgeEveryMs) {
      this.#timer = setInterval(() => void this.purge().catch(() => {}), options.purgeEveryMs);
      this.#timer.unref();
    }
  }

  /** Deletes keys older than the window; returns how many. */
  async purge(): Promise<number> {
    const { rowCount } = await this.#pool.query(
      `DELETE FROM idempotency_keys WHERE created_at < now() - interval '${IDEMPOTENCY_WINDOW_HOURS} hours'`,
    );
    return rowCount ?? 0;
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
  }

  /** Whether the caller used this key within the window: a request carrying it is a retry (or a reuse), not new. */
  async holds(caller: string, key: string): Promise<boolean> {
    const { rowCount } = await this.#pool.query(
      `SELECT 1 FROM idempotency_keys WHERE caller = $1 AND key = $2 AND created_at >= now() - interval '${IDEMPOTENCY_WINDOW_HOURS} hours'`,
      [caller, key],
    );
    return (rowCount ?? 0) > 0;
  }

  async run(
    caller: string,
    key: string,
    print: string,
    execute: () => Promise<HandlerResult>,
    recover?: Recover,
  ): Promise<HandlerResult> {
    if (!isIdempotencyKey(key)) throw validationFailed("Idempotency-Key must be 1-255 visible ASCII characters");
    await this.#pool.query(
      `DELETE FROM idempotency_keys WHERE caller = $1 AND key = $2 AND created_at < now() - interval '${IDEMPOTENCY_WINDOW_HOURS} hours'`,
      [caller, key],
    );
    const claimed = await this.#pool.query(
      `INSERT INTO idempotency_keys (caller, key, fingerprint, state, locked_until) VALUES ($1, $2, $3, 'IN_PROGRESS', now() + make_interval(secs => $4)) ON CONFLICT DO NOTHING`,
      [caller, key, print, IDEMPOTENCY_LEASE_MS / 1000],
    );
    if (claimed.rowCount === 0) return this.#existing(caller, key, print, execute, recover);
    return this.#execute(caller, key, execute);
  }

  /** Runs the operation under the key's lease; see the module comment for what is stored. */
  async #execute(caller: string, key: string, execute: () => Promise<HandlerResult>): Promise<HandlerResult> {
    const renew = setInterval(() => {
      void this.#pool
        .query(
          `UPDATE idempotency_keys SET locked_until = now() + make_interval(secs => $3) WHERE caller = $1 AND key = $2 AND state = 'IN_PROGRESS'`,
          [caller, key, IDEMPOTENCY_LEASE_MS / 1000],
        )
        .catch(() => {});
    }, IDEMPOTENCY_LEASE_MS / 3);
    let result: HandlerResult;
    try {
      result = await runWithIdempotencyClaim({ caller, key }, execute);
    } catch (error) {
      clearInterval(renew);
      const answer = answerOfKnownError(error);
      const status = answer ? answer.status : 500;
      if (answer && status < 500 && status !== 409 && status !== 429 && !wasRecorded(error)) {
        await this.#store(caller, key, status, {
          code: answer.code,
          message: answer.message,
          ...(answer.details ? { details: answer.details } : {}),
        });
      } else {
        // No write recorded: the key is freed and a retry runs again. A write recorded (a 5xx such as a receipt
        // timeout, whose transaction may still be mined): the key is kept and a retry learns the real outcome.
        await this.#release(caller, key);
      }
      throw error;
    }
    clearInterval(renew);
    try {
      await this.#store(caller, key, result.status ?? 200, result.body);
    } catch (error) {
      // The answer is lost; the key stays claimed (and tied to the write, if one was recorded): never freed. This
      // process is done with it, so its lease ends now and a retry takes the recovery path at once.
      await this.#endLease(caller, key).catch(() => {});
      throw error;
    }
    return result;
  }

  /** Frees a key whose request recorded no write; a key tied to a write keeps it, its lease ended (recovery path). */
  async #release(caller: string, key: string): Promise<void> {
    const freed = await this.#pool.query(
      `DELETE FROM idempotency_keys WHERE caller = $1 AND key = $2 AND state = 'IN_PROGRESS' AND outbox_tx_id IS NULL`,
      [caller, key],
    );
    if (freed.rowCount === 0) await this.#endLease(caller, key);
  }

  async #endLease(caller: string, key: string): Promise<void> {
    await this.#pool.query(
      `UPDATE idempotency_keys SET locked_until = now() WHERE caller = $1 AND key = $2 AND state = 'IN_PROGRESS'`,
      [caller, key],
    );
  }

  async #store(caller: string, key: string, status: number, body: unknown): Promise<void> {
    await this.#pool.query(
      `UPDATE idempotency_keys SET state = 'DONE', response_status = $3, response_body = $4 WHERE caller = $1 AND key = $2`,
      [caller, key, status, JSON.stringify(body ?? null)],
    );
  }

  async #existing(
    caller: string,
    key: string,
    print: string,
    execute: () => Promise<HandlerResult>,
    recover?: Recover,
  ): Promise<HandlerResult> {
    const { rows } = await this.#pool.query(
      `SELECT k.fingerprint, k.state, k.response_status, k.response_body, k.locked_until < now() AS lapsed, k.outbox_tx_id, k.request_id, t.status AS tx_status, t.tx_hash
       FROM idempotency_keys k LEFT JOIN chain_transactions t ON t.id = k.outbox_tx_id WHERE k.caller = $1 AND k.key = $2`,
      [caller, key],
    );
    const row = rows[0];
    if (!row) throw inProgress(); // freed between our insert and this read: the client retries
    if (row.fingerprint !== print)
      throw new AppError(422, "IDEMPOTENCY_KEY_REUSED", "This Idempotency-Key was used with a different request");
    if (row.state === "DONE")
      return {
        status: row.response_status,
        body: row.response_body ?? undefined,
        headers: { "Idempotent-Replayed": "true" },
      };
    if (!row.lapsed) throw inProgress();

    // The process that ran it is gone (or could not save its answer).
    if (!row.outbox_tx_id) {
      // Nothing was recorded: take the key over (one retry wins) and run the operation.
      const taken = await this.#pool.query(
        `UPDATE idempotency_keys SET locked_until = now() + make_interval(secs => $3) WHERE caller = $1 AND key = $2 AND state = 'IN_PROGRESS' AND outbox_tx_id IS NULL AND locked_until < now()`,
        [caller, key, IDEMPOTENCY_LEASE_MS / 1000],
      );
      if (taken.rowCount === 0) throw inProgress();
      return this.#execute(caller, key, execute);
    }
    const write: RecordedWrite = {
      outboxTxId: row.outbox_tx_id,
      requestId: row.request_id,
      transactionHash: row.tx_hash,
      status: row.tx_status,
    };
    if (write.status === "PENDING") throw waitingForChain(write.transactionHash);
    if (write.status === "FAILED") {
      const failed = {
        code: "CHAIN_REJECTED",
        message: "The request's transaction was mined and reverted: nothing changed on chain",
        details: { transactionHash: write.transactionHash },
      };
      await this.#store(caller, key, 409, failed);
      return { status: 409, body: failed, headers: { "Idempotent-Replayed": "true" } };
    }
    if (!recover || !this.#confirmed) {
      const message = "The request with this Idempotency-Key was carried out; read the resource for its result";
      const { transactionHash, requestId } = write;
      throw conflict("IDEMPOTENCY_OUTCOME_RECORDED", message, { transactionHash, requestId });
    }
    const tx = await this.#confirmed(write.outboxTxId);
    if (!tx) throw waitingForChain(write.transactionHash); // its block is gone: it is being sent again
    const result = await recover({ ...write, tx });
    await this.#store(caller, key, result.status ?? 200, result.body);
    return { ...result, headers: { ...result.headers, "Idempotent-Replayed": "true" } };
  }
}
