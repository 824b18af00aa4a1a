/**
 * The Idempotency-Key a request runs under, carried through its async context so that the chain gateway can tie
 * the key to the outbox transaction it records, in the same database transaction (crash safety). A neutral module:
 * the HTTP layer sets the claim (http/idempotency.ts), the chain gateway reads it, neither imports the other.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type pg from "pg";

const current = new AsyncLocalStorage<IdempotencyClaim>();

export interface IdempotencyClaim {
  caller: string;
  key: string;
}

/**
 * The Idempotency-Key the current request runs under, if any. The chain gateway reads it when a write is sent (the
 * nonce sequencer records writes from a worker that runs in another request's async context).
 */
export function currentIdempotencyClaim(): IdempotencyClaim | undefined {
  return current.getStore();
}

/** Called by the chain gateway inside the database transaction that records an outbox transaction: ties the key to it. */
export async function recordIdempotencyReference(
  client: pg.PoolClient,
  claim: IdempotencyClaim | undefined,
  outboxTxId: string,
  requestId: string | null | undefined,
): Promise<void> {
  if (!claim) return;
  await client.query(
    `UPDATE idempotency_keys SET outbox_tx_id = COALESCE(outbox_tx_id, $3), request_id = COALESCE(request_id, $4) WHERE caller = $1 AND key = $2`,
    [claim.caller, claim.key, outboxTxId, requestId ?? null],
  );
}

/** Runs `execute` with the claim as the current one (http/idempotency.ts, around a handler). */
export function runWithIdempotencyClaim<T>(claim: IdempotencyClaim, execute: () => Promise<T>): Promise<T> {
  return current.run(claim, execute);
}
