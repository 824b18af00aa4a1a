-- Jobs (Agenda 6 on Postgres) and the event outbox behind webhooks.

-- Agenda's own table, exactly as @agendajs/postgres-backend 3.0.6 creates it (getCreateTableSQL and indexes; a
-- test compares the two). Created here, under the migration lock, because several processes creating it at once
-- collide ("tuple concurrently updated"); Agenda runs with ensureSchema: false.
CREATE TABLE agenda_jobs (
  id UUID PRIMARY KEY DEFAULT gen_random_uuid(),
  name VARCHAR(255) NOT NULL,
  priority INTEGER NOT NULL DEFAULT 0,
  next_run_at TIMESTAMPTZ,
  type VARCHAR(10) NOT NULL DEFAULT 'normal' CHECK (type IN ('normal', 'single')),
  locked_at TIMESTAMPTZ,
  last_finished_at TIMESTAMPTZ,
  failed_at TIMESTAMPTZ,
  fail_count INTEGER DEFAULT NULL,
  fail_reason TEXT,
  repeat_timezone VARCHAR(100),
  last_run_at TIMESTAMPTZ,
  repeat_interval VARCHAR(255),
  data JSONB DEFAULT '{}'::jsonb,
  repeat_at VARCHAR(255),
  disabled BOOLEAN DEFAULT FALSE,
  progress REAL,
  fork BOOLEAN DEFAULT FALSE,
  last_modified_by VARCHAR(255),
  debounce_started_at TIMESTAMPTZ,
  start_date TIMESTAMPTZ,
  end_date TIMESTAMPTZ,
  skip_days JSONB,
  created_at TIMESTAMPTZ DEFAULT NOW(),
  updated_at TIMESTAMPTZ DEFAULT NOW()
);
CREATE INDEX agenda_jobs_find_and_lock_idx ON agenda_jobs (name, next_run_at, priority DESC, locked_at, disabled) WHERE disabled = FALSE;
CREATE UNIQUE INDEX agenda_jobs_single_job_idx ON agenda_jobs (name) WHERE type = 'single';
CREATE INDEX agenda_jobs_locked_at_idx ON agenda_jobs (locked_at) WHERE locked_at IS NOT NULL;
CREATE INDEX agenda_jobs_next_run_at_idx ON agenda_jobs (next_run_at) WHERE next_run_at IS NOT NULL;
-- Ours: one live job per key (a delivery, a stage deadline), and cancellation by key.
ALTER TABLE agenda_jobs ADD COLUMN job_key text;
CREATE UNIQUE INDEX agenda_jobs_key ON agenda_jobs (name, job_key) WHERE job_key IS NOT NULL;

CREATE OR REPLACE FUNCTION update_agenda_jobs_updated_at() RETURNS TRIGGER AS $$
BEGIN
  NEW.updated_at = NOW();
  RETURN NEW;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER agenda_jobs_updated_at_trigger BEFORE UPDATE ON agenda_jobs FOR EACH ROW EXECUTE FUNCTION update_agenda_jobs_updated_at();

-- Platform events, derived from confirmed transactions (docs/decisions.md). Ids are deterministic, so deriving the
-- same transaction twice (a retry, a chain reorganisation) writes nothing new.
CREATE TABLE events (
  id            uuid PRIMARY KEY,
  type          text NOT NULL,                 -- APPROVAL_REQUIRED, DOCUMENT_UPDATED, REQUEST_APPROVED, ...
  request_id    uuid REFERENCES requests (id),
  departments   text[] NOT NULL,               -- department codes it concerns ({} : administrators only)
  data          jsonb NOT NULL,
  chain_tx_id   uuid REFERENCES chain_transactions (id),
  occurred_at   timestamptz NOT NULL,          -- block time
  created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX events_request ON events (request_id, occurred_at);

-- One row per (event, webhook, subscribed name): the payload it gets and where its schedule stands.
CREATE TABLE webhook_deliveries (
  id               uuid PRIMARY KEY,
  event_id         uuid NOT NULL REFERENCES events (id),
  webhook_id       uuid NOT NULL REFERENCES webhooks (id),
  event_name       text NOT NULL,              -- the subscribed name (set A or set B)
  delivery_id      text NOT NULL,              -- the id receivers see (webhook-id header): stable across retries
  payload          jsonb NOT NULL,
  status           text NOT NULL CHECK (status IN ('PENDING', 'DELIVERED', 'FAILED', 'HELD', 'CANCELLED')),
  attempts         integer NOT NULL DEFAULT 0,
  next_attempt_at  timestamptz,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  UNIQUE (event_id, webhook_id, event_name)
);
CREATE INDEX webhook_deliveries_webhook ON webhook_deliveries (webhook_id, status);

ALTER TABLE webhook_logs ADD COLUMN delivery_id uuid REFERENCES webhook_deliveries (id);
ALTER TABLE webhook_logs ADD COLUMN next_retry_at timestamptz;
