-- control with a queue change, the second statement of its transaction (after
-- control-queue-lock.sql, whose lock it holds): writes the queue's row as the change left it, or
-- deletes it when the queue has no setting left (only queues with a setting have a row, so a claim
-- of any other queue finds none and locks nothing). A change that may let waiting workers claim
-- what they could not (a resume, a limit raised or removed) wakes the queue's waiters in every
-- process, as an enqueue does (functions/wake.sql; NOTIFY is sent at commit).
-- Params: $1 queue, $2 keep (false: delete the row), $3 paused_at (ms or NULL), $4 paused_by,
--         $5 pause_reason, $6 concurrency (or NULL), $7 wake
-- Returns: the record as the change left it, as control.sql: one row per queue with a setting (or
--          one with a NULL queue), each with `at`, the last stop request.
-- Uses: the queues table's primary key, and the table read whole (small); the control table.
WITH removed AS (
  DELETE FROM :"schema".queues AS s WHERE s.queue = $1::text AND NOT $2::boolean
  RETURNING s.queue
),
kept AS (
  UPDATE :"schema".queues AS s
  SET paused_at = $3::bigint, paused_by = $4::text, pause_reason = $5::text, concurrency = $6::integer
  WHERE s.queue = $1::text AND $2::boolean
  RETURNING s.queue, s.paused_at, s.paused_by, s.pause_reason, s.concurrency
),
woken AS MATERIALIZED (
  SELECT :"schema".wake(CASE WHEN $7::boolean THEN ARRAY[$1::text] END, NULL, NULL) AS done
)
-- The statement's snapshot holds the other queues' rows as they were, and this queue's as it was
-- before the change: that one comes from what the change wrote.
SELECT (SELECT c.at FROM :"schema".control AS c WHERE c.key = 'stop') AS at,
       q.queue, q.paused_at, q.paused_by, q.pause_reason, q.concurrency
FROM woken
LEFT JOIN (
  SELECT s.queue, s.paused_at, s.paused_by, s.pause_reason, s.concurrency
  FROM :"schema".queues AS s WHERE s.queue <> $1::text
  UNION ALL
  SELECT k.queue, k.paused_at, k.paused_by, k.pause_reason, k.concurrency FROM kept AS k
) AS q ON true
