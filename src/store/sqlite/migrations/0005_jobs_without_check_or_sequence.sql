-- ferry_jobs written anew, for two costs every enqueue paid:
-- - The CHECK on state: SQLite evaluated `state IN (five names)` on every row an enqueue wrote and
--   every update of a job's state, about a quarter of a bulk enqueue's time (10,000-job
--   transactions into copies of the table with and without it, 11 rounds each). Only Ferry's own
--   statements write states, each a name the conformance suite checks.
-- - AUTOINCREMENT: each insert statement updated its row in sqlite_sequence, one more page in
--   every serial enqueue's commit (3 instead of 2). Ids are still never given twice: ferry_ids
--   holds the highest id a purge may have deleted, and an enqueue gives ids above both it and
--   every id in the table (sql/enqueue-next-id.sql), so a purge of the newest jobs frees no id.
-- SQLite cannot drop a constraint it holds unnamed, so this migration copies every job once
-- (2.7-3.4 s for a million jobs, under the write lock) and makes the same indexes again.
CREATE TABLE ferry_ids (
  purged_up_to INTEGER NOT NULL -- no id at or below it is given again
) STRICT;
INSERT INTO ferry_ids (purged_up_to)
SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'ferry_jobs'), 0);

CREATE TABLE ferry_jobs_rebuilt (
  id               INTEGER PRIMARY KEY, -- given by enqueue, above ferry_ids.purged_up_to
  queue            TEXT    NOT NULL,
  name             TEXT    NOT NULL,
  payload          TEXT    NOT NULL,
  state            TEXT    NOT NULL, -- 'scheduled', 'ready', 'active', 'completed' or 'dead'
  priority         INTEGER NOT NULL,
  run_at           INTEGER NOT NULL,
  attempts         INTEGER NOT NULL DEFAULT 0,
  max_attempts     INTEGER NOT NULL,
  timeout_ms       INTEGER,
  unique_key       TEXT,
  lease_token      TEXT,
  lease_expires_at INTEGER,
  worker_id        TEXT,
  last_error       TEXT,
  result           TEXT,
  created_at       INTEGER NOT NULL,
  updated_at       INTEGER NOT NULL,
  finished_at      INTEGER
) STRICT;

INSERT INTO ferry_jobs_rebuilt (id, queue, name, payload, state, priority, run_at, attempts, max_attempts,
                                timeout_ms, unique_key, lease_token, lease_expires_at, worker_id, last_error,
                                result, created_at, updated_at, finished_at)
SELECT id, queue, name, payload, state, priority, run_at, attempts, max_attempts, timeout_ms, unique_key,
       lease_token, lease_expires_at, worker_id, last_error, result, created_at, updated_at, finished_at
FROM ferry_jobs;

DROP TABLE ferry_jobs;
ALTER TABLE ferry_jobs_rebuilt RENAME TO ferry_jobs;

CREATE INDEX ferry_jobs_scheduled ON ferry_jobs (run_at) WHERE state = 'scheduled';
CREATE INDEX ferry_jobs_active ON ferry_jobs (lease_expires_at) WHERE state = 'active';
CREATE INDEX ferry_jobs_finished ON ferry_jobs (state, finished_at) WHERE finished_at IS NOT NULL;
CREATE UNIQUE INDEX ferry_jobs_unique_key ON ferry_jobs (unique_key) WHERE unique_key IS NOT NULL;
CREATE INDEX ferry_jobs_ready_by_name ON ferry_jobs (queue, name, priority DESC, run_at, id) WHERE state = 'ready';
