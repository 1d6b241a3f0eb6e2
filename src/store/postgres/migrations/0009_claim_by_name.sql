-- Claims that take only the job names a worker has handlers for (ClaimParams.names), so workers
-- with different handler sets can share a queue: a rolling deploy that adds a job type no longer
-- fails the new jobs on the workers that do not know it yet, attempt after attempt. A job of a name
-- no waiter asked for stays in line, untouched, for a worker that knows it.
--
-- Flat whatever stands ahead: the filter reads one index range per (queue, name) asked for,
-- already in claim order, and merges their first rows; jobs of other names, however many, are not
-- read. jobs_ready stays for the claim without a filter, which must not merge over every name.
-- Measured (bench postgres-claim, 1,000,000 ready, 3 runs, 2026-12-02, a shared machine): a claim
-- of 1 of its name behind 100,000 ready jobs of another name took 0.82 ms p50 (0.58 ms with
-- synchronous_commit off), against 0.83 ms (0.77 ms) for the claim without names, which took
-- 0.88 ms (0.81 ms) before this migration.
--
-- The functions are in ../functions/ (claim, settle-and-claim, deliver, wait-for-work).

CREATE INDEX jobs_ready_by_name ON :"schema".jobs (queue, name, priority DESC, run_at, id) WHERE state = 'ready';

-- The names a waiting worker claims (NULL: every name), for the claims deliver() makes for it.
ALTER TABLE :"schema".waiters ADD COLUMN names text[];
