-- deleteJobs: one job, run once per id given, deleted unless it is active (its worker holds it).
-- Run after purge-keep-ids.sql, so that no id it deletes is given again; the delete trigger keeps
-- ferry_job_counts (migrations/0014), and the job's unique key goes with its row.
-- Params: :id
-- Returns: nothing; changes is 1 when the job was deleted.
-- Uses: the primary key.
DELETE FROM ferry_jobs WHERE id = :id AND state <> 'active'
