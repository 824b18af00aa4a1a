-- Custodial wallets and the transaction outbox: the only tables that hold keys and signed transactions.

CREATE TABLE wallets (
  address        text PRIMARY KEY,                 -- lower-case 0x address
  purpose        text NOT NULL,                    -- OPERATOR | DEPARTMENT | APPLICANT
  label          text,                             -- e.g. the department code
  encrypted_key  bytea NOT NULL,                   -- AES-256-GCM under the master key (keyVault.ts)
  next_nonce     bigint NOT NULL DEFAULT 0,        -- next nonce to assign; sequenced under the wallet's lock
  created_at     timestamptz NOT NULL DEFAULT now()
);

-- Every transaction is recorded here, signed, before it is broadcast.
CREATE TABLE chain_transactions (
  id             uuid PRIMARY KEY,
  kind           text NOT NULL,                    -- MINT_NFT, DOC_UPDATE, APPROVAL, REJECT, REVOKE, SUBMIT, ...
  status         text NOT NULL CHECK (status IN ('PENDING', 'CONFIRMED', 'FAILED')),
  from_address   text NOT NULL REFERENCES wallets (address),
  nonce          bigint NOT NULL,
  to_address     text NOT NULL,
  data           text NOT NULL,                    -- calldata
  raw_tx         text NOT NULL,                    -- the signed bytes: re-broadcast as is, same hash
  tx_hash        text NOT NULL UNIQUE,
  gas_limit      bigint NOT NULL,
  block_number   bigint,
  block_hash     text,
  tx_index       integer,
  gas_used       bigint,
  error_name     text,                             -- decoded custom error of a reverted transaction
  error_args     jsonb,
  error_message  text,
  request_id     uuid,                             -- licence request the transaction belongs to, if any
  broadcasts     integer NOT NULL DEFAULT 0,
  nonce_released boolean NOT NULL DEFAULT false,    -- the node refused it outright: its nonce was given back
  created_at     timestamptz NOT NULL DEFAULT now(),
  updated_at     timestamptz NOT NULL DEFAULT now(),
  confirmed_at   timestamptz
);
-- One live transaction per (wallet, nonce); a transaction the node refused outright released its nonce.
CREATE UNIQUE INDEX chain_transactions_wallet_nonce ON chain_transactions (from_address, nonce) WHERE NOT nonce_released;
CREATE INDEX chain_transactions_pending ON chain_transactions (created_at) WHERE status = 'PENDING';
CREATE INDEX chain_transactions_block ON chain_transactions (block_number DESC) WHERE status <> 'PENDING';
CREATE INDEX chain_transactions_kind_status ON chain_transactions (kind, status, created_at DESC);
CREATE INDEX chain_transactions_request ON chain_transactions (request_id) WHERE request_id IS NOT NULL;
