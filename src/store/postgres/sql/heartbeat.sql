-- heartbeat: a worker's record written, its counts added, and a bounded share of the cleaning
-- (expired records, minutes older than a day), in one statement: one round trip, one commit.
-- Data-modifying CTEs each run once whether or not the query reads them; none sees the others'
-- changes, so the deletes leave the worker's own record and the minutes still kept alone.
-- Params: $1 worker id, $2 info (WorkerInfo as JSON text), $3 ttl (ms), $4 now (ms or NULL: the
--         server's clock), $5 minutes, $6 queues, $7 completed, $8 failed (the counts, one element
--         each, merged and ordered by minute then queue: kernel/workers.ts), $9 the day kept (ms),
--         $10 most expired records to delete, $11 most old minutes to delete
-- Returns: nothing worth reading (one row).
-- Uses: the primary keys of workers and throughput (the upserts lock rows in the counts' order, so
--       two heartbeats adding to the same minutes never deadlock), workers_expiry, and throughput's
--       primary key from its start for the old minutes. SKIP LOCKED: a row another heartbeat is
--       deleting is left to it.
WITH clock AS (SELECT coalesce($4::bigint, :"schema".now_ms()) AS at),
put AS (
  INSERT INTO :"schema".workers AS w (worker_id, info, heartbeat_at, expires_at)
  SELECT $1::text, $2::text, clock.at, clock.at + $3::bigint FROM clock
  ON CONFLICT (worker_id) DO UPDATE SET info = excluded.info, heartbeat_at = excluded.heartbeat_at,
    expires_at = excluded.expires_at
),
added AS (
  INSERT INTO :"schema".throughput AS t (minute, queue, completed, failed)
  SELECT c.minute, c.queue, c.completed, c.failed
  FROM unnest($5::bigint[], $6::text[], $7::bigint[], $8::bigint[]) WITH ORDINALITY
         AS c(minute, queue, completed, failed, n), clock
  WHERE c.minute >= clock.at - $9::bigint
  ORDER BY c.n
  ON CONFLICT (minute, queue) DO UPDATE SET completed = t.completed + excluded.completed,
    failed = t.failed + excluded.failed
),
expired AS (
  DELETE FROM :"schema".workers WHERE worker_id IN (
    SELECT w.worker_id FROM :"schema".workers AS w, clock
    WHERE w.expires_at <= clock.at AND w.worker_id <> $1::text
    ORDER BY w.expires_at LIMIT $10::integer FOR UPDATE SKIP LOCKED
  )
),
old AS (
  DELETE FROM :"schema".throughput WHERE (minute, queue) IN (
    SELECT t.minute, t.queue FROM :"schema".throughput AS t, clock
    WHERE t.minute < clock.at - $9::bigint
    ORDER BY t.minute LIMIT $11::integer FOR UPDATE SKIP LOCKED
  )
)
SELECT 1 AS done
