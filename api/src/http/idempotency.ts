/**
 * Idempotency-Key for POST and PUT, scoped to the caller: the same key with the same request within 24 h replays
 * the stored response and does nothing else (no second transaction); the same key with a different request → 422;
 * while the first is still running → 409. A request that failed without effect (a 5xx before anything was
 * recorded) frees its key; one whose transaction was recorded keeps it.
 */
import { createHash } from "node:crypto";
import type pg from "pg";
import { wasRecorded } from "../chain/chainGateway.ts";
import { canonicalJson } from "../canonicalJson.ts";
import { AppError } from "./appError.ts";
import type { HandlerResult } from "./routeTable.ts";

export const IDEMPOTENCY_WINDOW_HOURS = 24;

export function fingerprint(method: string, path: string, body: unknown): string {
  return createHash("sha256").update(`${method} ${path}\n${canonicalJson(body ?? null)}`).digest("hex");
}

export class IdempotencyStore {
  readonly #pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  async run(caller: string, key: string, print: string, execute: () => Promise<HandlerResult>): Promise<HandlerResult> {
    if (!/^[\x21-\x7e]{1,255}$/.test(key)) throw new AppError(400, "VALIDATION_ERROR", "Idempotency-Key must be 1-255 visible ASCII characters");
    await this.#pool.query(
      `DELETE FROM idempotency_keys WHERE caller = $1 AND key = $2 AND created_at < now() - interval '${IDEMPOTENCY_WINDOW_HOURS} hours'`,
      [caller, key],
    );
    const claimed = await this.#pool.query(
      `INSERT INTO idempotency_keys (caller, key, fingerprint, state) VALUES ($1, $2, $3, 'IN_PROGRESS') ON CONFLICT DO NOTHING`,
      [caller, key, print],
    );
    if (claimed.rowCount === 0) return this.#replay(caller, key, print);

    try {
      const result = await execute();
      await this.#store(caller, key, result.status ?? 200, result.body);
      return result;
    } catch (error) {
      const status = error instanceof AppError ? error.status : 500;
      if (error instanceof AppError && (status < 500 || wasRecorded(error))) {
        await this.#store(caller, key, status, { code: error.code, message: error.message, ...(error.details ? { details: error.details } : {}) });
      } else {
        await this.#pool.query(`DELETE FROM idempotency_keys WHERE caller = $1 AND key = $2`, [caller, key]);
      }
      throw error;
    }
  }

  async #store(caller: string, key: string, status: number, body: unknown): Promise<void> {
    await this.#pool.query(
      `UPDATE idempotency_keys SET state = 'DONE', response_status = $3, response_body = $4 WHERE caller = $1 AND key = $2`,
      [caller, key, status, JSON.stringify(body ?? null)],
    );
  }

  async #replay(caller: string, key: string, print: string): Promise<HandlerResult> {
    const { rows } = await this.#pool.query(`SELECT fingerprint, state, response_status, response_body FROM idempotency_keys WHERE caller = $1 AND key = $2`, [caller, key]);
    const row = rows[0];
    if (!row) throw new AppError(409, "IDEMPOTENCY_IN_PROGRESS", "A request with this Idempotency-Key is being processed; retry shortly");
    if (row.fingerprint !== print) {
      throw new AppError(422, "IDEMPOTENCY_KEY_REUSED", "This Idempotency-Key was used with a different request");
    }
    if (row.state === "IN_PROGRESS") {
      throw new AppError(409, "IDEMPOTENCY_IN_PROGRESS", "A request with this Idempotency-Key is still being processed; retry shortly");
    }
    return { status: row.response_status, body: row.response_body ?? undefined, headers: { "Idempotent-Replayed": "true" } };
  }
}
