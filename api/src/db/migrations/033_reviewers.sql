-- Department reviewers: people who sign in to the console with a passkey (WebAuthn, ES256 only: the chain checks
-- P-256). An invitation is a one-time link (only the sha256 of its token is kept); registering a passkey uses it up.
-- A session is a cookie whose sha256 is kept here, with an idle and an absolute expiry. A signing request collects
-- reviewers' assertions over one digest (a decision, a key proof, a reviewer change) until the department's
-- passkey account's threshold is reached, then the platform relays it.
CREATE TABLE reviewers (
  id               uuid PRIMARY KEY,
  department_code  text NOT NULL REFERENCES departments (code),
  name             text NOT NULL,
  invited_by       text NOT NULL,               -- the principal that invited them (department:<code> or client:<id>)
  created_at       timestamptz NOT NULL DEFAULT now(),
  removed_at       timestamptz
);
CREATE INDEX reviewers_by_department ON reviewers (department_code) WHERE removed_at IS NULL;

CREATE TABLE reviewer_invitations (
  id               uuid PRIMARY KEY,
  reviewer_id      uuid NOT NULL REFERENCES reviewers (id),
  token_hash       text NOT NULL UNIQUE,        -- sha256 hex of the link's token
  expires_at       timestamptz NOT NULL,
  challenge        text,                        -- the pending registration ceremony's challenge (base64url)
  challenge_expires_at timestamptz,
  used_at          timestamptz,
  created_at       timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE reviewer_passkeys (
  id               text PRIMARY KEY,            -- the WebAuthn credential id, base64url
  reviewer_id      uuid NOT NULL REFERENCES reviewers (id),
  device_name      text NOT NULL,
  cose_public_key  bytea NOT NULL,              -- as the authenticator gave it (for sign-in verification)
  p256_key         text NOT NULL UNIQUE,        -- 0x qx ‖ qy (64 bytes): the key a DepartmentPasskeyAccount stores
  sign_count       bigint NOT NULL DEFAULT 0,
  transports       text[] NOT NULL DEFAULT '{}',
  created_at       timestamptz NOT NULL DEFAULT now(),
  last_used_at     timestamptz,
  removed_at       timestamptz
);
CREATE INDEX reviewer_passkeys_by_reviewer ON reviewer_passkeys (reviewer_id) WHERE removed_at IS NULL;

-- One-use WebAuthn challenges for sign-in ceremonies (no user known yet).
CREATE TABLE webauthn_challenges (
  challenge        text PRIMARY KEY,            -- base64url
  purpose          text NOT NULL CHECK (purpose IN ('SIGN_IN')),
  expires_at       timestamptz NOT NULL
);

CREATE TABLE console_sessions (
  token_hash       text PRIMARY KEY,            -- sha256 hex of the cookie's value
  reviewer_id      uuid NOT NULL REFERENCES reviewers (id),
  passkey_id       text NOT NULL REFERENCES reviewer_passkeys (id),
  created_at       timestamptz NOT NULL DEFAULT now(),
  last_seen_at     timestamptz NOT NULL DEFAULT now(),
  expires_at       timestamptz NOT NULL,        -- absolute expiry
  ended_at         timestamptz
);
CREATE INDEX console_sessions_by_reviewer ON console_sessions (reviewer_id) WHERE ended_at IS NULL;

-- A department's passkey account (DepartmentPasskeyAccount), once deployed for it.
CREATE TABLE passkey_accounts (
  address          text PRIMARY KEY,            -- lower-case 0x
  department_code  text NOT NULL REFERENCES departments (code),
  threshold        integer NOT NULL,
  chain_tx_id      uuid NOT NULL REFERENCES chain_transactions (id),  -- the deployment
  created_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX passkey_accounts_by_department ON passkey_accounts (department_code);

CREATE TABLE signing_requests (
  id               uuid PRIMARY KEY,
  department_code  text NOT NULL REFERENCES departments (code),
  account_address  text NOT NULL REFERENCES passkey_accounts (address),
  kind             text NOT NULL CHECK (kind IN ('DECISION', 'KEY_PROOF', 'REVIEWER_CHANGE')),
  request_id       uuid,                        -- DECISION: the licence request
  digest           text NOT NULL,               -- 0x, 32 bytes: the WebAuthn challenge
  payload          jsonb NOT NULL,              -- what is signed and how to relay it (typed data, decision input)
  threshold        integer NOT NULL,
  status           text NOT NULL CHECK (status IN ('COLLECTING', 'SUBMITTED', 'FAILED', 'EXPIRED')),
  created_by       uuid REFERENCES reviewers (id),
  created_at       timestamptz NOT NULL DEFAULT now(),
  expires_at       timestamptz NOT NULL,
  chain_tx_id      uuid REFERENCES chain_transactions (id),
  failure          jsonb
);
CREATE INDEX signing_requests_open ON signing_requests (department_code, created_at) WHERE status = 'COLLECTING';

CREATE TABLE signing_request_assertions (
  signing_request_id uuid NOT NULL REFERENCES signing_requests (id),
  passkey_id       text NOT NULL REFERENCES reviewer_passkeys (id),
  reviewer_id      uuid NOT NULL REFERENCES reviewers (id),
  assertion        jsonb NOT NULL,              -- WebAuthnAssertion.Assertion fields (r, s, indices, data, JSON)
  signed_at        timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (signing_request_id, passkey_id)
);
