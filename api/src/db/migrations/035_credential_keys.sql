-- The platform's credential-signing keys (ES256, P-256): the issuer's did:web names each by its key id. The private
-- key is sealed by the key vault (secretSealer purpose "credential-signing-key", bound to the key id); the public key
-- is kept in clear for the DID document. Generated once, by whichever process starts first.
CREATE TABLE credential_keys (
  key_id      text PRIMARY KEY,
  public_jwk  jsonb NOT NULL,
  sealed_key  bytea NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);
