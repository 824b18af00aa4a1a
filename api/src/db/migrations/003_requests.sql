-- Licence requests, their documents and the off-chain workflow definitions they are pinned to.
-- The chain decides what exists: a row written together with a chain transaction is visible only once the index
-- has the matching on-chain record (licence, document version, workflow), so a write whose transaction failed
-- leaves nothing visible and nothing has to be updated after confirmation.

CREATE TABLE workflows (
  id                 uuid PRIMARY KEY,
  workflow_type      text NOT NULL,
  name               text NOT NULL,
  description        text,
  stages             jsonb NOT NULL,               -- WorkflowStageInput[] as given, sorted by stageOrder
  definition_hash    text NOT NULL UNIQUE,         -- keccak256 of the canonical definition (with its id), also on
                                                   -- chain: joins this row to the index (version, active, chain id)
  validity_seconds   bigint NOT NULL,              -- lifetime of an issued licence
  chain_tx_id        uuid REFERENCES chain_transactions (id),
  created_at         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX workflows_type ON workflows (workflow_type);

-- Token ids are assigned here (1 .. 2^40-1 on chain); a failed mint leaves a gap, never a duplicate.
CREATE SEQUENCE token_ids START 1;

CREATE TABLE request_number_counters (
  prefix  text NOT NULL,
  year    integer NOT NULL,
  last    integer NOT NULL,
  PRIMARY KEY (prefix, year)
);

CREATE TABLE requests (
  id                 uuid PRIMARY KEY,
  request_number     text NOT NULL UNIQUE,
  token_id           bigint NOT NULL UNIQUE,
  request_type       text NOT NULL,
  applicant_id       text NOT NULL,
  applicant_name     text,
  applicant_email    text,
  applicant_address  text NOT NULL,               -- custodial address the token is minted to
  metadata           jsonb NOT NULL DEFAULT '{}',
  created_by         text NOT NULL,               -- principal kind:id
  cancel_reason      text,
  chain_tx_id        uuid NOT NULL REFERENCES chain_transactions (id),
  created_at         timestamptz NOT NULL DEFAULT now(),
  updated_at         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX requests_applicant ON requests (applicant_id, created_at DESC);
CREATE INDEX requests_created ON requests (created_at DESC);
CREATE INDEX requests_type ON requests (request_type, created_at DESC);

CREATE TABLE documents (
  id                 uuid PRIMARY KEY,
  request_id         uuid NOT NULL REFERENCES requests (id),
  doc_type           text NOT NULL,
  original_filename  text NOT NULL,
  description        text,
  created_at         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX documents_request ON documents (request_id);

CREATE TABLE document_versions (
  document_id   uuid NOT NULL REFERENCES documents (id),
  version       integer NOT NULL,
  sha256        text NOT NULL,                    -- 0x-prefixed lower-case hex
  file_size     bigint NOT NULL,
  mime_type     text NOT NULL,
  original_filename text NOT NULL,
  storage_key   text NOT NULL,
  description   text,
  uploaded_by   text NOT NULL,                    -- principal kind:id
  chain_tx_id   uuid NOT NULL REFERENCES chain_transactions (id),
  created_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (document_id, version)
);
CREATE INDEX document_versions_sha ON document_versions (sha256);

-- Idempotency-Key: the same key from the same caller with the same request replays the stored response.
CREATE TABLE idempotency_keys (
  caller           text NOT NULL,
  key              text NOT NULL,
  fingerprint      text NOT NULL,                 -- sha256 of method, path and body
  state            text NOT NULL CHECK (state IN ('IN_PROGRESS', 'DONE')),
  response_status  integer,
  response_body    jsonb,
  created_at       timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (caller, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
