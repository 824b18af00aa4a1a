-- Authentication (api/src/auth): OAuth 2.0 clients, identity-locker sign-ins in progress and our one-time codes.
-- Only hashes of secrets and codes are stored.

-- System clients (client credentials). Rows are never deleted: revocation sets revoked_at.
CREATE TABLE oauth_clients (
  client_id          text PRIMARY KEY,
  name               text NOT NULL,
  secret_hash        text NOT NULL,                 -- sha256:<hex> (generated secrets) | scrypt:... (ADMIN_CLIENT_SECRET)
  scopes             text[] NOT NULL,
  bootstrap          boolean NOT NULL DEFAULT false, -- the admin client from ADMIN_CLIENT_ID / ADMIN_CLIENT_SECRET
  created_at         timestamptz NOT NULL DEFAULT now(),
  tokens_valid_after timestamptz,                   -- set when the secret is rotated: tokens issued earlier are refused
  revoked_at         timestamptz
);

-- A sign-in at the external identity provider in progress: keyed by the hash of the `state` we sent it.
CREATE TABLE identity_logins (
  state_hash     text PRIMARY KEY,
  redirect_uri   text NOT NULL,                     -- the applicant client's redirect_uri
  client_state   text NOT NULL,                     -- the applicant client's state, returned unchanged
  code_verifier  text NOT NULL,                     -- PKCE verifier for the provider's code
  created_at     timestamptz NOT NULL DEFAULT now(),
  expires_at     timestamptz NOT NULL
);
CREATE INDEX identity_logins_expiry ON identity_logins (expires_at);

-- Our single-use authorization codes, exchanged at POST /auth/identitylocker/token.
CREATE TABLE identity_codes (
  code_hash      text PRIMARY KEY,                  -- sha256 hex of the code
  redirect_uri   text NOT NULL,
  subject        text NOT NULL,                     -- identity-locker id of the applicant
  name           text,
  email          text,
  idp            text NOT NULL,                     -- development | identity-locker
  created_at     timestamptz NOT NULL DEFAULT now(),
  expires_at     timestamptz NOT NULL
);
CREATE INDEX identity_codes_expiry ON identity_codes (expires_at);
