-- listJobs with ids: one job, run once per id given.
-- Params: :id
-- Returns: the row, or nothing when no job has that id.
-- Uses: the primary key.
SELECT * FROM ferry_jobs WHERE id = :id
