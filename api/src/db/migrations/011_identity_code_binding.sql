-- Issue 15 (M2): our identity-locker codes are bound to the applicant client that asked for them and to its PKCE
-- challenge (S256): the exchange must present the same client_id and the code_verifier. Rows in flight when this
-- runs (at most 10 minutes old) get empty values, which no exchange can match: those sign-ins start again.
ALTER TABLE identity_logins ADD COLUMN client_id text NOT NULL DEFAULT '', ADD COLUMN code_challenge text NOT NULL DEFAULT '';
ALTER TABLE identity_codes ADD COLUMN client_id text NOT NULL DEFAULT '', ADD COLUMN code_challenge text NOT NULL DEFAULT '';
