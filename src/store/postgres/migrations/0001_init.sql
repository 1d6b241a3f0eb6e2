-- The jobs table, its indexes and the control table. The functions that make each hot-path Store
-- call one round trip are in ../functions/, applied after the migrations.
-- Written for psql-style interpolation: :"schema" is the schema (a quoted identifier) and :'schema'
-- the same name as a string literal; the store substitutes both with a validated name.
-- Times are epoch milliseconds (bigint); JSON columns hold JSON text, returned exactly as stored.

CREATE TABLE :"schema".jobs (
  id               bigserial PRIMARY KEY, -- a sequence: ids grow in enqueue order and are never reused
  queue            text    NOT NULL,
  name             text    NOT NULL,
  payload          text    NOT NULL,
  state            text    NOT NULL CHECK (state IN ('scheduled', 'ready', 'active', 'completed', 'dead')),
  priority         integer NOT NULL,
  run_at           bigint  NOT NULL,
  attempts         integer NOT NULL DEFAULT 0,
  max_attempts     integer NOT NULL,
  timeout_ms       integer,
  unique_key       text,
  lease_token      text,
  lease_expires_at bigint,
  worker_id        text,
  last_error       text,
  result           text,
  created_at       bigint  NOT NULL,
  updated_at       bigint  NOT NULL,
  finished_at      bigint
);

-- claim: one index range per queue, already in claim order, so the first row read is the next job
-- whatever the backlog. Partial: a job is in it only while ready.
CREATE INDEX jobs_ready ON :"schema".jobs (queue, priority DESC, run_at, id) WHERE state = 'ready';

-- claim promotes the due scheduled jobs of its queues; waitForWork arms its timer at their earliest run_at.
CREATE INDEX jobs_scheduled ON :"schema".jobs (queue, run_at) WHERE state = 'scheduled';

-- recoverExpired: active jobs in lease-expiry order.
CREATE INDEX jobs_active ON :"schema".jobs (lease_expires_at) WHERE state = 'active';

-- purge, retry --all-dead, and the recent counts of stats.
CREATE INDEX jobs_finished ON :"schema".jobs (state, finished_at) WHERE finished_at IS NOT NULL;

-- enqueue: a key is held while its job exists.
CREATE UNIQUE INDEX jobs_unique_key ON :"schema".jobs (unique_key) WHERE unique_key IS NOT NULL;

-- Requests from operators to every worker on the store, e.g. `ferry stop-workers`. One row per
-- kind of request; `at` is when it was last made (epoch ms).
CREATE TABLE :"schema".control (
  key text PRIMARY KEY,
  at  bigint NOT NULL
);
