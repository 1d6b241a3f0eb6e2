-- Retention (docs/retention.md): how long each queue keeps its finished jobs, a job's own
-- keepForMs, and the indexes that let prune() delete a batch at the cost of the batch.
--
-- A queue's retention, in its queue control row (store/kernel/queue-control.ts): ages in ms (-1:
-- forever) and counts, each NULL for the default (store/kernel/retention.ts).
ALTER TABLE ferry_queues ADD COLUMN keep_completed_ms INTEGER;
ALTER TABLE ferry_queues ADD COLUMN keep_dead_ms INTEGER;
ALTER TABLE ferry_queues ADD COLUMN keep_completed_count INTEGER;
ALTER TABLE ferry_queues ADD COLUMN keep_dead_count INTEGER;

-- A job's own keepForMs lives in its meta text (store/kernel/job-meta.ts), which every enqueue path
-- already writes; this column reads it from there, so no enqueue statement changed. VIRTUAL: it is
-- computed when read, so a row stores nothing more, and only the indexes below hold it.
ALTER TABLE ferry_jobs ADD COLUMN keep_for_ms INTEGER GENERATED ALWAYS AS (json_extract(meta, '$.keepForMs')) VIRTUAL;

-- prune by a queue's retention: each queue's finished jobs of a state in finish order (then id,
-- the rowid every index ends with), so the oldest are the first read, the count limit's boundary
-- is an OFFSET from the newest, and the queues with finished jobs are found by a skip over the
-- index. Jobs with their own keepForMs are not in it: they never block a queue's oldest.
-- What it costs every job that completes or dies: one more index entry, measured at 6.1 µs per
-- settled job without it and 7.0 µs with it (the settle UPDATE alone, batches of 32, synchronous
-- off so no fsync, 200,000 jobs, medians of 4 interleaved runs at load 3-5, 2026-12-07), against
-- 50-70 µs a no-op job costs a worker end to end.
CREATE INDEX ferry_jobs_retention ON ferry_jobs (state, queue, finished_at)
  WHERE finished_at IS NOT NULL AND keep_for_ms IS NULL;

-- prune by a job's own keepForMs: finished jobs that have one, by when their time runs out.
CREATE INDEX ferry_jobs_kept ON ferry_jobs (finished_at + keep_for_ms)
  WHERE finished_at IS NOT NULL AND keep_for_ms IS NOT NULL;
