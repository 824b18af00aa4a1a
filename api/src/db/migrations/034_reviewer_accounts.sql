-- Reviewer accounts are audited under their own entity (invitations, passkeys, sign-ins, removals), and the device
-- name a reviewer gives when asking for registration options is kept with the ceremony's challenge until the
-- registration answers it.
ALTER TABLE audit_logs DROP CONSTRAINT IF EXISTS audit_logs_entity_type_check;
ALTER TABLE audit_logs ADD CONSTRAINT audit_logs_entity_type_check
  CHECK (entity_type IN ('REQUEST', 'APPROVAL', 'DOCUMENT', 'DEPARTMENT', 'WORKFLOW', 'CLIENT', 'WEBHOOK', 'APPLICANT',
                         'REVIEWER'));
ALTER TABLE reviewer_invitations ADD COLUMN device_name text;
