-- A job's group (NewJob.group: a tenant, a customer, an API key, what per-group limits count) and
-- its start deadline (NewJob.expiresAt, or expiresInMs from the server's clock at enqueue): a job
-- not started by then never runs, and ends dead with cause 'expired'. Both NULL for a job without.
--
-- Catalog only: a column added without a default (NULL) rewrites no row and scans nothing, and its
-- lock is held for an instant. Rows of a process of an older Ferry still running have no group
-- and no deadline, as before.
--
-- The functions changed with it (../functions/: claim ends its queues' jobs past their deadline
-- before it picks, and never picks one; enqueue_batch and enqueue store both; deliver sends both),
-- which a new migration must come with anyway (../functions/README.md).

ALTER TABLE :"schema".jobs ADD COLUMN group_key text;
ALTER TABLE :"schema".jobs ADD COLUMN expires_at bigint;

-- The jobs that may still expire: those with a deadline that have not started. A job without a
-- deadline is never in it, so the enqueues, claims and settles of ordinary jobs maintain nothing
-- more; a claim, the recoverer's sweep and findExpiredLeases find the expired ones in one seek
-- (an empty one while no job has a deadline). A job leaves it as it starts or ends.
CREATE INDEX jobs_deadline ON :"schema".jobs (expires_at)
  WHERE expires_at IS NOT NULL AND state IN ('ready', 'scheduled');
