-- How long a unique key holds (docs/uniqueness.md): until the job is purged (as before), until it
-- finishes, until it starts, or for a window from its enqueue (a throttle).
--
-- held_unique_key is the key while the job holds it, and what the unique index is on now:
-- unique_key stays the job's key, for whoever reads the job, after the key is free. unique_until
-- is 'finished' or 'started' (NULL: until the purge) and unique_expires_at a throttle's end (NULL:
-- none). All three NULL for a job without a key: a plain job's insert writes none of them, and
-- adding a nullable column without a default rewrites no row.
ALTER TABLE ferry_jobs ADD COLUMN held_unique_key TEXT;
ALTER TABLE ferry_jobs ADD COLUMN unique_until TEXT;
ALTER TABLE ferry_jobs ADD COLUMN unique_expires_at INTEGER;

-- Every key held so far holds until its job is purged.
UPDATE ferry_jobs SET held_unique_key = unique_key WHERE unique_key IS NOT NULL;
DROP INDEX ferry_jobs_unique_key;
CREATE UNIQUE INDEX ferry_jobs_held_unique_key ON ferry_jobs (held_unique_key) WHERE held_unique_key IS NOT NULL;

-- The key frees in the statement that moves its job to the state its mode names, whichever
-- statement that is (a claim or a delivery, a settle, a cancel, a lease or start deadline that ran
-- out): never a moment before or after, and no statement that changes a state can forget it. Once
-- free, a key is never held again by its job (a retried dead job does not take it back: another
-- job may hold it by then). The WHEN is all a job without a mode pays, per state change.
CREATE TRIGGER ferry_jobs_free_unique_key AFTER UPDATE OF state ON ferry_jobs
  WHEN new.unique_until IS NOT NULL AND new.held_unique_key IS NOT NULL
   AND (new.state IN ('completed', 'dead') OR (new.state = 'active' AND new.unique_until = 'started'))
BEGIN
  UPDATE ferry_jobs SET held_unique_key = NULL WHERE id = new.id;
END;
