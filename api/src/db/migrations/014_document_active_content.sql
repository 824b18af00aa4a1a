-- Issue 15 (M7): what active content an uploaded PDF carries (JAVASCRIPT, LAUNCH_ACTION, EMBEDDED_FILE, XFA), stored
-- with its version and shown to reviewers in the document detail. Empty: none found (and for images).
ALTER TABLE document_versions ADD COLUMN active_content text[] NOT NULL DEFAULT '{}';
