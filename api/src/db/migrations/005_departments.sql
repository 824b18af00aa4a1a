-- Departments: the off-chain half of a department (name, webhook, API credentials). The chain holds code ↔ wallet
-- and the active flag; a row is visible once index.departments has its code (registration confirmed on chain).
-- Credentials: the API key only as SHA-256 (256-bit random key); the API secret sealed with the key vault
-- (AES-256-GCM, associated data "department-api-secret:<code>"), because verifying signed requests needs it.
CREATE TABLE departments (
  code                     text PRIMARY KEY CHECK (code ~ '^[A-Z_]+$' AND length(code) <= 31),
  name                     text NOT NULL,
  webhook_url              text,
  wallet_address           text NOT NULL,            -- lower-case 0x address of its custodial wallet at registration
  api_key_hash             text NOT NULL,            -- sha256:<hex> of the API key (auth/secrets.ts)
  api_secret_sealed        bytea NOT NULL,           -- the API secret, sealed by the key vault
  require_signed_requests  boolean NOT NULL DEFAULT false,
  chain_tx_id              uuid NOT NULL REFERENCES chain_transactions (id),  -- the registration
  created_at               timestamptz NOT NULL DEFAULT now(),
  updated_at               timestamptz NOT NULL DEFAULT now(),
  key_rotated_at           timestamptz
);

-- Signatures of signed department requests already used (replay protection). A signature is accepted only within
-- 5 minutes of its timestamp, so rows whose timestamp is older than 10 minutes are purged.
CREATE TABLE department_request_signatures (
  department_code  text NOT NULL,
  signature        text NOT NULL,                  -- lower-case hex HMAC-SHA256
  signed_at        timestamptz NOT NULL,           -- the request's X-Timestamp
  PRIMARY KEY (department_code, signature)
);
CREATE INDEX department_request_signatures_signed_at ON department_request_signatures (signed_at);
