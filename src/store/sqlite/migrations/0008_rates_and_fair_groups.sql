-- Rate limits, group limits and fairness between groups (docs/queue-control.md).
--
-- A queue's further limits, beside its concurrency (store/kernel/queue-control.ts), and when a
-- window that held back a ready job next lets one start (rate_opens_at, epoch ms): the claim that
-- found it full writes it, and a waiting worker's timer is set for it (wait-for-work-next-due.sql),
-- so a worker held back by a rate sleeps until then instead of polling.
ALTER TABLE ferry_queues ADD COLUMN rate_limit INTEGER;
ALTER TABLE ferry_queues ADD COLUMN rate_per_ms INTEGER;
ALTER TABLE ferry_queues ADD COLUMN group_concurrency INTEGER;
ALTER TABLE ferry_queues ADD COLUMN group_rate_limit INTEGER;
ALTER TABLE ferry_queues ADD COLUMN group_rate_per_ms INTEGER;
ALTER TABLE ferry_queues ADD COLUMN rate_opens_at INTEGER;

-- The starts a rate counts: one row per job claimed from a queue with a rate or a group rate,
-- kept for the queue's longest window (claims prune the rest). group_key is '' for a job without
-- a group. The key reads a queue's window newest first; the index a group's.
CREATE TABLE ferry_queue_starts (
  queue      TEXT NOT NULL,
  started_at INTEGER NOT NULL,
  job_id     INTEGER NOT NULL,
  group_key  TEXT NOT NULL,
  PRIMARY KEY (queue, started_at, job_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX ferry_queue_starts_by_group ON ferry_queue_starts (queue, group_key, started_at);

-- Whose turn it is: per queue with grouped jobs, the group the last claim served ('' for the
-- jobs without a group), so the next claim starts after it.
CREATE TABLE ferry_group_turns (
  queue      TEXT PRIMARY KEY,
  last_group TEXT NOT NULL
) STRICT, WITHOUT ROWID;

-- Ready jobs with a group in an index of their own, by group, so a claim goes round the groups
-- one seek each, however many jobs the biggest holds; the index by name keeps the jobs without a
-- group (a job is in one of the two, so an enqueue still writes one ready-index entry). A queue
-- without grouped jobs costs its claims one empty seek here. group_key ends the index by name so that
-- the claim's reads of it stay covering: SQLite takes a partial index's `state = 'ready'` as known
-- but re-reads each row to test `group_key IS NULL` (EXPLAIN QUERY PLAN: USING INDEX, not COVERING
-- INDEX), which made a claim of 1 without settings 0.094 -> 0.131 ms p50.
DROP INDEX ferry_jobs_ready_by_name;
CREATE INDEX ferry_jobs_ready_by_name ON ferry_jobs (queue, name, priority DESC, run_at, id, group_key)
  WHERE state = 'ready' AND group_key IS NULL;
CREATE INDEX ferry_jobs_ready_grouped ON ferry_jobs (queue, group_key, priority DESC, run_at, id)
  WHERE state = 'ready' AND group_key IS NOT NULL;
-- The live leases of each group, for a group concurrency limit: only grouped jobs pay for it.
CREATE INDEX ferry_jobs_active_grouped ON ferry_jobs (queue, group_key, lease_expires_at)
  WHERE state = 'active' AND group_key IS NOT NULL;
