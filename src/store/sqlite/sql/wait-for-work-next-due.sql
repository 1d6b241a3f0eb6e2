-- waitForWork: the earliest run time of any scheduled job, to arm the wake-up timer.
-- Params: none
-- Returns: next_run_at (NULL when nothing is scheduled).
-- Uses: ferry_jobs_scheduled (min over the index: one seek).
SELECT min(run_at) AS next_run_at FROM ferry_jobs WHERE state = 'scheduled'
