-- deleteJobs: deletes the jobs given that are not active (their worker holds them). Nothing else
-- refers to a job row: its unique key goes with it, and stats count the table itself.
-- Params: $1 id[]
-- Returns: the number of jobs deleted.
-- Uses: the primary key.
WITH deleted AS (
  DELETE FROM :"schema".jobs WHERE id = ANY($1::bigint[]) AND state <> 'active'
  RETURNING 1
)
SELECT count(*)::integer AS count FROM deleted
