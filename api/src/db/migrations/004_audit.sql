-- Every state change in the platform writes one row here, in the same database transaction as the change.
-- Append-only: the API has no route that updates or deletes it, and this trigger refuses both.
CREATE TABLE audit_logs (
  id           uuid PRIMARY KEY,
  entity_type  text NOT NULL CHECK (entity_type IN ('REQUEST', 'APPROVAL', 'DOCUMENT', 'DEPARTMENT', 'WORKFLOW', 'CLIENT', 'WEBHOOK')),
  entity_id    text NOT NULL,
  action       text NOT NULL,
  actor_type   text NOT NULL,                      -- APPLICANT | CLIENT | DEPARTMENT | ADMIN | SYSTEM
  actor_id     text NOT NULL,
  old_value    jsonb,
  new_value    jsonb,
  ip_address   text,
  user_agent   text,
  request_id   text,                               -- the HTTP request id (X-Request-Id)
  tx_hash      text,                               -- the chain transaction, when there is one
  created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX audit_logs_entity ON audit_logs (entity_type, entity_id, created_at DESC);
CREATE INDEX audit_logs_actor ON audit_logs (actor_id, created_at DESC);
CREATE INDEX audit_logs_created ON audit_logs (created_at DESC);

CREATE FUNCTION audit_logs_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'audit_logs is append-only';
END $$;
CREATE TRIGGER audit_logs_no_update BEFORE UPDATE OR DELETE ON audit_logs FOR EACH ROW EXECUTE FUNCTION audit_logs_append_only();
