-- Job counts per queue and state, so that stats() reads a few rows instead of counting every job
-- (sql/stats-counts.sql): a GROUP BY over ferry_jobs took 450-650 ms at 1,000,000 jobs, and
-- better-sqlite3 is synchronous, so it held the event loop of the process that read it (the
-- metrics' background reading, every 15 s by default).
--
-- state is a job state, or 'expired': of a queue's dead jobs, those never started by their start
-- deadline (cause 'expired', what stats().expired reports), counted here too so that no read
-- looks into the dead jobs. A count that reaches 0 stays as a row of 0; stats() skips those.
--
-- Who keeps which count exact, in the same transaction as the change:
-- - A change of a job's state or queue, and a delete: the triggers below, so that every statement
--   that moves a job (claim, settle, cancel, retry, recover, expiry, changeJobs, purge, prune, a
--   debounce, ...) keeps the counts without knowing of them, as ferry_jobs_free_unique_key frees a
--   key (migrations/0010). Their WHEN is all a statement pays that changes no state (a renew).
-- - An insert: not a trigger, but the enqueue (enqueue-rows.ts, the one writer of new jobs), one
--   upsert per queue and state a call created (sql/enqueue-count.sql). A trigger per row cost a
--   bulk enqueue 1 µs a job (10,000-job enqueueMany: 3.5 -> 4.4 µs a job); the upsert costs the
--   call a few. A job not created (its unique key held) is not counted. So a statement that
--   inserts jobs anywhere else must add them too.
CREATE TABLE ferry_job_counts (
  queue TEXT NOT NULL,
  state TEXT NOT NULL, -- 'scheduled', 'ready', 'active', 'completed', 'dead', or 'expired'
  count INTEGER NOT NULL,
  PRIMARY KEY (queue, state)
) STRICT, WITHOUT ROWID;

-- The jobs already there: one pass over the table, under the migration's write lock.
INSERT INTO ferry_job_counts (queue, state, count)
SELECT queue, state, count(*) FROM ferry_jobs GROUP BY queue, state;
INSERT INTO ferry_job_counts (queue, state, count)
SELECT queue, 'expired', count(*) FROM ferry_jobs
WHERE state = 'dead' AND expires_at IS NOT NULL AND last_error ->> '$.kind' = 'expired'
GROUP BY queue;

-- A job's state or queue changed: one less where it was, one more where it is.
CREATE TRIGGER ferry_jobs_count_update AFTER UPDATE OF state, queue ON ferry_jobs
  WHEN old.state <> new.state OR old.queue <> new.queue
BEGIN
  UPDATE ferry_job_counts SET count = count - 1 WHERE queue = old.queue AND state = old.state;
  INSERT INTO ferry_job_counts (queue, state, count) VALUES (new.queue, new.state, 1)
    ON CONFLICT (queue, state) DO UPDATE SET count = count + 1;
END;

-- The same for the expired ones: a job that ends dead because of its start deadline counts, and
-- leaving dead (a retry) or its queue uncounts it. Only a dead job with a deadline gets past the
-- WHEN, so the others never read last_error.
CREATE TRIGGER ferry_jobs_count_expired AFTER UPDATE OF state, queue ON ferry_jobs
  WHEN (old.state <> new.state OR old.queue <> new.queue)
   AND ((old.state = 'dead' AND old.expires_at IS NOT NULL) OR (new.state = 'dead' AND new.expires_at IS NOT NULL))
BEGIN
  UPDATE ferry_job_counts SET count = count - 1
  WHERE queue = old.queue AND state = 'expired'
    AND old.state = 'dead' AND old.expires_at IS NOT NULL AND old.last_error ->> '$.kind' = 'expired';
  INSERT INTO ferry_job_counts (queue, state, count)
  SELECT new.queue, 'expired', 1
  WHERE new.state = 'dead' AND new.expires_at IS NOT NULL AND new.last_error ->> '$.kind' = 'expired'
  ON CONFLICT (queue, state) DO UPDATE SET count = count + 1;
END;

-- A job deleted (purge, prune): one less in its state, and among the expired if it was one.
CREATE TRIGGER ferry_jobs_count_delete AFTER DELETE ON ferry_jobs
BEGIN
  UPDATE ferry_job_counts SET count = count - 1 WHERE queue = old.queue AND state = old.state;
  UPDATE ferry_job_counts SET count = count - 1
  WHERE queue = old.queue AND state = 'expired'
    AND old.state = 'dead' AND old.expires_at IS NOT NULL AND old.last_error ->> '$.kind' = 'expired';
END;
