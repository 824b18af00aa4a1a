-- The rate limiter's token buckets, shared by every API process on this database (http/rateLimit.ts,
-- PostgresBuckets): one row per bucket, e.g. "write:applicant:<id>" or "failure:address:<ip>". `tokens` is the
-- level after the last request, `updated_ms` that request's time (the database's clock, milliseconds since the
-- epoch); the level now is min(capacity, tokens + elapsed × capacity / 60,000 ms). A row untouched for a minute
-- is a full bucket and is deleted. UNLOGGED: no WAL for a write on every request; after a crash (or on a standby
-- promoted) the table is empty, i.e. every bucket full.
CREATE UNLOGGED TABLE rate_limit_buckets (
  key         text PRIMARY KEY,
  tokens      double precision NOT NULL,
  updated_ms  double precision NOT NULL
);
