-- The salt of each request's applicant commitment (keccak256(salt ‖ applicant id), recorded in LicenceMinted).
-- Requests minted before this migration have none (their mint recorded a zero commitment).
ALTER TABLE requests ADD COLUMN identity_salt text;
