-- control with a queue change, the second statement of its transaction (after
-- control-queue-lock.sql, whose lock it holds): writes the queue's row as the change left it, or
-- deletes it when the queue has no setting left (only queues with a setting have a row, so a claim
-- of any other queue finds none and locks nothing). A change that may let waiting workers claim
-- what they could not (a resume, a limit raised or removed) wakes the queue's waiters in every
-- process, as an enqueue does (functions/wake.sql; NOTIFY is sent at commit).
-- Every change forgets the claims' wake hint (rate_opens_at: the next claim held back by a rate
-- writes it again, under the rates as they are now), and a queue left without a rate and a group
-- rate forgets its start log (the starts table), which only rates read: set again later, a rate
-- counts the starts from then on. The claims of the queue wait for the row's lock, so none of
-- them logs a start meanwhile.
-- Params: $1 queue, $2 keep (false: delete the row), $3 paused_at (ms or NULL), $4 paused_by,
--         $5 pause_reason, $6 concurrency, $7 rate_limit, $8 rate_per_ms, $9 group_concurrency,
--         $10 group_rate_limit, $11 group_rate_per_ms, $13 keep_completed_ms, $14 keep_dead_ms,
--         $15 keep_completed_count, $16 keep_dead_count (each NULL when not set), $12 wake
-- Returns: the record as the change left it, as control.sql: one row per queue with a setting (or
--          one with a NULL queue), each with `at`, the last stop request, and schedules_version.
-- Uses: the queues table's primary key, and the table read whole (small); the control table;
--       starts_by_queue.
WITH removed AS (
  DELETE FROM :"schema".queues AS s WHERE s.queue = $1::text AND NOT $2::boolean
  RETURNING s.queue
),
kept AS (
  UPDATE :"schema".queues AS s
  SET paused_at = $3::bigint, paused_by = $4::text, pause_reason = $5::text, concurrency = $6::integer,
      rate_limit = $7::integer, rate_per_ms = $8::bigint, group_concurrency = $9::integer,
      group_rate_limit = $10::integer, group_rate_per_ms = $11::bigint, rate_opens_at = NULL,
      keep_completed_ms = $13::bigint, keep_dead_ms = $14::bigint, keep_completed_count = $15::integer,
      keep_dead_count = $16::integer
  WHERE s.queue = $1::text AND $2::boolean
  RETURNING s.queue, s.paused_at, s.paused_by, s.pause_reason, s.concurrency, s.rate_limit, s.rate_per_ms,
            s.group_concurrency, s.group_rate_limit, s.group_rate_per_ms, s.keep_completed_ms, s.keep_dead_ms,
            s.keep_completed_count, s.keep_dead_count
),
forgotten AS (
  DELETE FROM :"schema".starts AS st
  WHERE st.queue = $1::text AND NOT ($2::boolean AND ($7::integer IS NOT NULL OR $10::integer IS NOT NULL))
),
woken AS MATERIALIZED (
  SELECT :"schema".wake(CASE WHEN $12::boolean THEN ARRAY[$1::text] END, NULL, NULL) AS done
)
-- The statement's snapshot holds the other queues' rows as they were, and this queue's as it was
-- before the change: that one comes from what the change wrote.
SELECT (SELECT c.at FROM :"schema".control AS c WHERE c.key = 'stop') AS at,
       (SELECT c.at FROM :"schema".control AS c WHERE c.key = 'schedules') AS schedules_version,
       q.queue, q.paused_at, q.paused_by, q.pause_reason, q.concurrency, q.rate_limit, q.rate_per_ms,
       q.group_concurrency, q.group_rate_limit, q.group_rate_per_ms, q.keep_completed_ms, q.keep_dead_ms,
       q.keep_completed_count, q.keep_dead_count
FROM woken
LEFT JOIN (
  SELECT s.queue, s.paused_at, s.paused_by, s.pause_reason, s.concurrency, s.rate_limit, s.rate_per_ms,
         s.group_concurrency, s.group_rate_limit, s.group_rate_per_ms, s.keep_completed_ms, s.keep_dead_ms,
         s.keep_completed_count, s.keep_dead_count
  FROM :"schema".queues AS s WHERE s.queue <> $1::text
  UNION ALL
  SELECT k.queue, k.paused_at, k.paused_by, k.pause_reason, k.concurrency, k.rate_limit, k.rate_per_ms,
         k.group_concurrency, k.group_rate_limit, k.group_rate_per_ms, k.keep_completed_ms, k.keep_dead_ms,
         k.keep_completed_count, k.keep_dead_count
  FROM kept AS k
) AS q ON true
