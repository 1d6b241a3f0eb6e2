-- waitForWork: when to look again without being told: the earliest run time of any scheduled job,
-- or the earliest time a rate that holds back a ready job of the waiter's queues lets one start
-- (claim-rate-opens.sql), whichever comes first. A rate's time already past wakes the waiter at
-- once: its claim then finds the window open, or writes a later time, or none when nothing is held
-- back (every claim of a queue with a rate keeps the time up to date), so it never wakes it twice.
-- Params: :queues (JSON array of the waiter's queues, or NULL for none)
-- Returns: next_due_at (NULL when nothing is scheduled and no rate holds a job back).
-- Uses: ferry_jobs_scheduled (min over the index: one seek); ferry_queues, a small table.
SELECT nullif(
  min(
    coalesce((SELECT min(run_at) FROM ferry_jobs WHERE state = 'scheduled'), 9223372036854775807),
    coalesce(
      (SELECT min(rate_opens_at) FROM ferry_queues WHERE queue IN (SELECT value FROM json_each(:queues))),
      9223372036854775807
    )
  ),
  9223372036854775807
) AS next_due_at
