-- Webhook registrations and every delivery attempt.
CREATE TABLE webhooks (
  id               uuid PRIMARY KEY,
  department_code  text,                          -- null: an administrator's webhook, receiving every event
  url              text NOT NULL,
  events           text[] NOT NULL,
  secret_sealed    bytea NOT NULL,                -- the HMAC secret, encrypted (it must be usable to sign)
  is_active        boolean NOT NULL DEFAULT true,
  disabled_at      timestamptz,
  disabled_reason  text,
  created_by       text NOT NULL,
  deleted_at       timestamptz,                   -- deleted webhooks keep their logs
  created_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhooks_department ON webhooks (department_code) WHERE deleted_at IS NULL;

CREATE TABLE webhook_logs (
  id               uuid PRIMARY KEY,
  webhook_id       uuid NOT NULL REFERENCES webhooks (id),
  event_id         text NOT NULL,                 -- stable per event: receivers de-duplicate on it
  event_type       text NOT NULL,
  payload          jsonb NOT NULL,
  status           text NOT NULL CHECK (status IN ('pending', 'success', 'failed')),
  response_status  integer,
  response_time    integer,                       -- milliseconds
  retry_count      integer NOT NULL DEFAULT 0,
  error            text,
  created_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_logs_webhook ON webhook_logs (webhook_id, created_at DESC);
CREATE INDEX webhook_logs_status ON webhook_logs (status, created_at DESC);
