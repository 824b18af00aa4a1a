-- GET /requests pages newest (or oldest) first with the id as tie-breaker, in one direction: each filter's index
-- serves the ORDER BY itself, so a page reads its OFFSET + LIMIT rows instead of sorting every match.
DROP INDEX requests_applicant;
DROP INDEX requests_created;
DROP INDEX requests_type;
CREATE INDEX requests_applicant ON requests (applicant_id, created_at, id);
CREATE INDEX requests_created ON requests (created_at, id);
CREATE INDEX requests_type ON requests (request_type, created_at, id);
