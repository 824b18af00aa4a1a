-- Off-chain part of department decisions: the remarks (their keccak256 is on chain), the rejection reason and the
-- documents asked for. Joined to the indexed decision by transaction hash.
CREATE TABLE decision_remarks (
  tx_hash             text PRIMARY KEY,
  request_id          uuid NOT NULL REFERENCES requests (id),
  department_code     text NOT NULL,
  decision            text NOT NULL CHECK (decision IN ('APPROVED', 'REJECTED', 'CHANGES_REQUESTED')),
  remarks             text NOT NULL,
  remarks_hash        text NOT NULL,
  reason              text,                        -- rejection reason (SAFETY_VIOLATION, ...)
  required_documents  jsonb,                       -- request-changes: document types asked for
  chain_tx_id         uuid NOT NULL REFERENCES chain_transactions (id),
  created_at          timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX decision_remarks_request ON decision_remarks (request_id);

-- Administrative actions on issued licences (suspend, reinstate, revoke): the reason text kept off chain.
CREATE TABLE licence_actions (
  tx_hash      text PRIMARY KEY,
  request_id   uuid NOT NULL REFERENCES requests (id),
  action       text NOT NULL CHECK (action IN ('SUSPEND', 'REINSTATE', 'REVOKE')),
  reason_code  integer,
  reason       text,
  chain_tx_id  uuid NOT NULL REFERENCES chain_transactions (id),
  created_at   timestamptz NOT NULL DEFAULT now()
);
