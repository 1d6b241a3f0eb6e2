-- A job's group (a tenant, a customer: what per-group limits count) and its start deadline (a job
-- not started by then never runs and ends dead, cause 'expired'). Both NULL for a job without.
ALTER TABLE ferry_jobs ADD COLUMN group_key TEXT;
ALTER TABLE ferry_jobs ADD COLUMN expires_at INTEGER;

-- The jobs that may still expire: those with a deadline that have not started. A job without a
-- deadline is never in it, so the enqueues, claims and settles of such jobs pay nothing for it;
-- a claim finds the expired ones in one seek (sql/claim-expire.sql).
CREATE INDEX ferry_jobs_deadline ON ferry_jobs (expires_at)
  WHERE expires_at IS NOT NULL AND state IN ('ready', 'scheduled');
