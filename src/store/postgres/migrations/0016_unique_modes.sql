-- How long a unique key holds (docs/uniqueness.md): until the job is purged (as before), until it
-- finishes, until it starts, or for a window from its enqueue (a throttle).
--
-- held_unique_key is the key while the job holds it, and what the unique index is on now:
-- unique_key stays the job's key, for whoever reads the job, after the key is free. unique_until
-- is 'finished' or 'started' (NULL: until the purge), unique_expires_at a throttle's end (NULL:
-- none). All three NULL for a job without a key, so a plain job's row grows by three bits of its
-- null bitmap; columns added without a default rewrite no row. The statements that move a job to
-- the state its mode names free the key in the same UPDATE (../functions/claim.sql, settle.sql,
-- recover-expired.sql, ../sql/cancel.sql, recover-expired-start-deadlines.sql): a row trigger
-- would have done it for every such statement, but PostgreSQL fetches the old row of every row
-- updated for one, a plain job's claims and settles included. A throttle's key is freed by the
-- first enqueue of the key that finds its window ended (enqueue_batch).
--
-- The functions changed with it (enqueue_batch writes and reads held_unique_key; claim, settle and
-- recover_expired free it) are applied after this, in the same transaction: no enqueue ever sees
-- the index gone and the functions not yet changed.

ALTER TABLE :"schema".jobs
  ADD COLUMN held_unique_key text,
  ADD COLUMN unique_until text,
  ADD COLUMN unique_expires_at bigint;

-- Every key held so far holds until its job is purged.
UPDATE :"schema".jobs SET held_unique_key = unique_key WHERE unique_key IS NOT NULL;
CREATE UNIQUE INDEX jobs_held_unique_key ON :"schema".jobs (held_unique_key) WHERE held_unique_key IS NOT NULL;
DROP INDEX :"schema".jobs_unique_key;
