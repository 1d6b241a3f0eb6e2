-- Retention (docs/retention.md): how long each queue keeps its finished jobs, a job's own
-- keepForMs, and the indexes that let prune() delete a batch at the cost of the batch.
--
-- A queue's retention, in its queue control row (store/kernel/queue-control.ts): ages in ms (-1:
-- forever) and counts, each NULL for the default (store/kernel/retention.ts). Catalog only.
ALTER TABLE :"schema".queues
  ADD COLUMN keep_completed_ms bigint,
  ADD COLUMN keep_dead_ms bigint,
  ADD COLUMN keep_completed_count integer,
  ADD COLUMN keep_dead_count integer;

-- A job's own keepForMs lives in its meta text (store/kernel/job-meta.ts), which every enqueue path
-- already writes; this column reads it from there, so no enqueue function changed (claim() did:
-- it returns the jobs row type, column by column). A generated column is STORED on PostgreSQL 15
-- (the only kind before 18): adding it rewrites the table once, under its exclusive lock (seconds
-- for a million jobs), and a job without meta pays one NULL.
ALTER TABLE :"schema".jobs
  ADD COLUMN keep_for_ms bigint GENERATED ALWAYS AS ((meta::jsonb ->> 'keepForMs')::bigint) STORED;

-- prune by a queue's retention: each queue's finished jobs of a state in finish order, then id, so
-- the oldest are the first read, the count limit's boundary is an OFFSET from the newest, and the
-- queues with finished jobs are found by a skip over the index. Jobs with their own keepForMs are
-- not in it: they never block a queue's oldest.
CREATE INDEX jobs_retention ON :"schema".jobs (state, queue, finished_at, id)
  WHERE finished_at IS NOT NULL AND keep_for_ms IS NULL;

-- prune by a job's own keepForMs: finished jobs that have one, by when their time runs out.
CREATE INDEX jobs_kept ON :"schema".jobs ((finished_at + keep_for_ms))
  WHERE finished_at IS NOT NULL AND keep_for_ms IS NOT NULL;
