-- Applicants' delegations to system clients: a system client acts for, and sees, only the applicants with a live
-- delegation to it. One row per applicant and client; revoking sets revoked_at, granting again clears it. The
-- applicant's name and e-mail are taken from their own sign-in when they grant: the name a system client's requests
-- publish on the licence.
CREATE TABLE delegations (
  applicant_id     text NOT NULL,
  client_id        text NOT NULL REFERENCES oauth_clients (client_id),
  applicant_name   text,
  applicant_email  text,
  granted_at       timestamptz NOT NULL DEFAULT now(),
  revoked_at       timestamptz,
  PRIMARY KEY (applicant_id, client_id)
);
CREATE INDEX delegations_live_by_client ON delegations (client_id, applicant_id) WHERE revoked_at IS NULL;
