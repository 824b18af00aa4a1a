-- Issue 15: Idempotency-Key after a crash.
-- locked_until: the lease of the process running the request (renewed while it runs); a row IN_PROGRESS whose
--   lease has passed belongs to a process that died.
-- outbox_tx_id / request_id: written in the same database transaction as the outbox record of the request's write,
--   so whether the write happened is known for certain after a crash: recorded → the original answer is rebuilt
--   once the transaction is mined; not recorded → the operation runs again.
ALTER TABLE idempotency_keys
  ADD COLUMN locked_until timestamptz NOT NULL DEFAULT now(),
  ADD COLUMN outbox_tx_id uuid,
  ADD COLUMN request_id uuid;
