-- Issue 15 (M6, L9): sign-ins are audited (entity APPLICANT for identity-locker sign-ins), and the audit table is
-- append-only for TRUNCATE too (UPDATE and DELETE were already refused).
ALTER TABLE audit_logs DROP CONSTRAINT IF EXISTS audit_logs_entity_type_check;
ALTER TABLE audit_logs ADD CONSTRAINT audit_logs_entity_type_check
  CHECK (entity_type IN ('REQUEST', 'APPROVAL', 'DOCUMENT', 'DEPARTMENT', 'WORKFLOW', 'CLIENT', 'WEBHOOK', 'APPLICANT'));
CREATE TRIGGER audit_logs_no_truncate BEFORE TRUNCATE ON audit_logs FOR EACH STATEMENT EXECUTE FUNCTION audit_logs_append_only();
