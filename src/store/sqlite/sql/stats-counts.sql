-- stats: jobs per queue and state as counted (migrations/0014_job_counts.sql), and per queue the
-- dead ones that expired (state 'expired'). Scheduled jobs already due are still 'scheduled'
-- here: stats-due.sql counts those.
-- Params: none
-- Returns: queue, state (a job state or 'expired'), count; rows of 0 left out.
-- Uses: ferry_job_counts, a row per queue and state: not the jobs.
SELECT queue, state, count FROM ferry_job_counts WHERE count > 0
