-- OID4VCI pre-authorized offers of a licence credential. The pre-authorized code is kept only as its SHA-256: the
-- applicant's offer carries it, the wallet redeems it once (redeemed_at) at the token endpoint before expires_at.
CREATE TABLE credential_offers (
  id           uuid PRIMARY KEY,
  request_id   uuid NOT NULL REFERENCES requests (id),
  code_hash    bytea NOT NULL UNIQUE,
  expires_at   timestamptz NOT NULL,
  redeemed_at  timestamptz,
  created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX credential_offers_request ON credential_offers (request_id);

-- c_nonce values of the nonce endpoint (SHA-256 only), each spent by the first credential request whose proof
-- names it; expired rows are deleted when new nonces are made.
CREATE TABLE credential_nonces (
  nonce_hash  bytea PRIMARY KEY,
  expires_at  timestamptz NOT NULL
);
