-- One index of ready jobs instead of two: ferry_jobs_ready (queue, priority DESC, run_at, id) is
-- gone, and ferry_jobs_ready_by_name (migrations/0003) serves every claim. Each job that becomes
-- ready or stops being ready (every enqueue, claim, retry) wrote a page of each, and a serial
-- commit's cost is its pages: a one-job enqueue wrote 4 pages to the WAL and now writes 3.
-- A claim without a names filter now finds the names of a queue's ready jobs first, one index
-- seek each (sql/claim-ready-names.sql), then merges their first rows as a named claim does:
-- its cost grows with the number of job names that have ready jobs in the queue, not the backlog.
-- A worker always claims with its handlers' names.
DROP INDEX ferry_jobs_ready;
