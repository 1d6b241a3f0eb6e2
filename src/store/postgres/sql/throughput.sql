-- throughput: the counts of the minutes in [since, until), cut to the day kept, of one queue or
-- every queue, by minute then queue.
-- Params: $1 since, $2 until (ms or NULL: now), $3 queue (or NULL: every queue), $4 now (ms or
--         NULL: the server's clock), $5 the day kept (ms)
-- Returns: minute, queue, completed, failed (bigints, as text)
-- Uses: throughput's primary key (minute, queue): a range of at most a day of minutes.
WITH clock AS (SELECT coalesce($4::bigint, :"schema".now_ms()) AS at)
SELECT t.minute, t.queue, t.completed, t.failed
FROM :"schema".throughput AS t, clock
WHERE t.minute >= greatest($1::bigint, clock.at - $5::bigint)
  AND t.minute < coalesce($2::bigint, clock.at + 1)
  AND ($3::text IS NULL OR t.queue = $3::text)
ORDER BY t.minute, t.queue
