-- waitForWork: when to look again without being told: the earliest run time of any scheduled job,
-- or the earliest time a rate that held back a ready job lets one start (claim-rate-opens.sql),
-- whichever comes first. A rate's time already past is no reason to wake: the claim that came
-- after it found the window open, or wrote a later one.
-- Params: :now
-- Returns: next_due_at (NULL when nothing is scheduled and no rate holds a job back).
-- Uses: ferry_jobs_scheduled (min over the index: one seek); ferry_queues, a small table.
SELECT nullif(
  min(
    coalesce((SELECT min(run_at) FROM ferry_jobs WHERE state = 'scheduled'), 9223372036854775807),
    coalesce((SELECT min(rate_opens_at) FROM ferry_queues WHERE rate_opens_at > :now), 9223372036854775807)
  ),
  9223372036854775807
) AS next_due_at
