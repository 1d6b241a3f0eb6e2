-- Queue control (Store.control: pause, resume, limit): operators pause a queue or cap how many of
-- its jobs run at once, for every worker of the schema, and the claim enforces it in the same
-- statement that picks the jobs (../functions/claim.sql).
--
-- One row per queue that has a setting; a queue without any has no row (control() deletes it when
-- its last setting goes), so the claim of a queue nobody set anything on reads one index probe of
-- an empty or small table, and takes no lock. A limited queue's row is what its claims lock
-- (FOR UPDATE) before counting its live leases, so concurrent claims in different sessions cannot
-- together pass the limit. Times are epoch milliseconds, as in jobs.
--
-- No index on jobs: the live leases of a limited queue are counted over jobs_active (active jobs by
-- lease expiry, which holds no more rows than jobs running), so no claim or settle maintains
-- anything more than before.
--
-- The functions changed with it (../functions/: claim, deliver, wait_for_work, settle,
-- recover_expired), which a new migration must come with anyway (../functions/README.md).

CREATE TABLE :"schema".queues (
  queue        text PRIMARY KEY,
  paused_at    bigint,  -- NULL while the queue runs
  paused_by    text,
  pause_reason text,
  concurrency  integer  -- at most this many active jobs with a live lease; NULL: no limit
);
