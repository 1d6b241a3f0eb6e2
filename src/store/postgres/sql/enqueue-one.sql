-- enqueue of a single job without a unique key: what a serial `client.enqueue` sends. The same
-- job, wake-up and delivery as functions/enqueue-batch.sql, as one plain statement: a call of that
-- PL/pgSQL function carries a fixed cost on the server (its SET clauses, and each of its nested
-- statements and calls planned and run one by one) that made up most of a single enqueue's time.
-- Measured in one process, chunks of 100 serial enqueues of each variant interleaved (load 1.2-2.8):
-- through the function 0.76-1.12 ms per job, this statement 0.46-0.57 ms, a bare INSERT per commit
-- 0.27-0.43 ms. Prepared once per connection, it is planned generically after five calls (its
-- parameters are scalars, so the generic plan costs what a custom one does). With a unique key, or
-- more than one job, the function runs (migration 0004 explains what keys need).
-- The wake-up: a scheduled job announces 'queue@run_at' (wake()'s message for a due job). A ready
-- job with a waiter of its queue registered goes through deliver() (with a token base) and then
-- wake(), as in the function: deliver() claims the row this statement inserted, since a VOLATILE
-- function's statements see what the calling statement wrote before it called them (the insert
-- has returned its row by then). Without such a waiter, wake() would delete nothing, so the
-- notification is sent here. A waiter that registers after this statement's snapshot is woken by
-- that notification at commit, as with the function.
-- Params: $1 queue, $2 name, $3 payload (JSON text), $4 priority, $5 run_at (ms or NULL), $6 delay_ms
--         (used when run_at is NULL), $7 max_attempts, $8 timeout_ms, $9 group (or NULL),
--         $10 expires_at (ms or NULL), $11 expires_in_ms (used when expires_at is NULL; NULL too: no
--         start deadline), $12 meta (JSON text, or NULL: a plain job), $13 now (ms, or NULL for the
--         server's clock), $14 the lease tokens' random base for a delivery (NULL: no delivery)
-- Returns: one row: id (text); the job is always created.
-- Uses: the jobs id sequence; waiters (small and UNLOGGED, read whole).
WITH clock AS (SELECT coalesce($13::bigint, :"schema".now_ms()) AS at),
inserted AS (
  INSERT INTO :"schema".jobs (queue, name, payload, state, priority, run_at, max_attempts, timeout_ms, group_key,
                              expires_at, created_at, updated_at, meta)
  SELECT $1::text, $2::text, $3::text, CASE WHEN t.run_at <= clock.at THEN 'ready' ELSE 'scheduled' END,
         $4::integer, t.run_at, $7::integer, $8::integer, $9::text, coalesce($10::bigint, clock.at + $11::bigint),
         clock.at, clock.at, $12::text
  FROM clock, LATERAL (SELECT coalesce($5::bigint, clock.at + $6::bigint) AS run_at) AS t
  RETURNING id, state, run_at, created_at
),
-- The wake-up in a CTE of its own, joined, so that the one column the store reads is the id: pg
-- describes every column of every result, and that was the costliest of this process's own work
-- for such an enqueue (10 µs of pg's Result.addFields per call for three columns, in a CPU
-- profile of 2,000 serial enqueues in a fresh process). MATERIALIZED: computed once, whole.
woken AS MATERIALIZED (
  SELECT CASE
           WHEN i.state = 'scheduled' THEN pg_notify('ferry:' || :'schema', $1::text || '@' || i.run_at)
           WHEN EXISTS (SELECT 1 FROM :"schema".waiters AS w WHERE w.queues && ARRAY[$1::text]) THEN
             :"schema".wake(CASE WHEN $14::text IS NULL THEN ARRAY[$1::text]
                                 ELSE :"schema".deliver(ARRAY[$1::text], 1, i.created_at, $14::text) END,
                            NULL::text[], NULL::bigint[])
           ELSE pg_notify('ferry:' || :'schema', $1::text)
         END AS done
  FROM inserted AS i
)
SELECT i.id::text AS id FROM inserted AS i, woken
