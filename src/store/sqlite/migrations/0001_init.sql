-- The jobs table and the indexes every Store method relies on.
-- Times are epoch milliseconds; JSON columns hold JSON text.

CREATE TABLE ferry_jobs (
  id               INTEGER PRIMARY KEY AUTOINCREMENT, -- AUTOINCREMENT: ids are never reused after a purge
  queue            TEXT    NOT NULL,
  name             TEXT    NOT NULL,
  payload          TEXT    NOT NULL,
  state            TEXT    NOT NULL CHECK (state IN ('scheduled', 'ready', 'active', 'completed', 'dead')),
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

-- claim: one index range per queue, already in claim order, so the first row read is the next job
-- whatever the backlog. Partial: a job is in it only while ready.
CREATE INDEX ferry_jobs_ready ON ferry_jobs (queue, priority DESC, run_at, id) WHERE state = 'ready';

-- claim promotes due scheduled jobs; waitForWork arms its timer at the earliest run_at.
CREATE INDEX ferry_jobs_scheduled ON ferry_jobs (run_at) WHERE state = 'scheduled';

-- recoverExpired: active jobs in lease-expiry order.
CREATE INDEX ferry_jobs_active ON ferry_jobs (lease_expires_at) WHERE state = 'active';

-- purge, and listing finished jobs.
CREATE INDEX ferry_jobs_finished ON ferry_jobs (state, finished_at) WHERE finished_at IS NOT NULL;

-- enqueue: a key is held while its job exists.
CREATE UNIQUE INDEX ferry_jobs_unique_key ON ferry_jobs (unique_key) WHERE unique_key IS NOT NULL;
