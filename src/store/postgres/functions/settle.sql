-- settle: every outcome of a batch in one statement. Each item is fenced by its lease token: only
-- the holder of the current lease changes the job. A retry or snooze whose run time has come goes
-- straight back to ready; snoozed gives the attempt back and keeps the previous error.
-- A row locked outside Ferry delays only its own job: the rows are locked with SKIP LOCKED and one
-- that cannot be locked is reported as locked (nothing written for it: the worker writes that
-- outcome again later), while every other item of the batch goes through. (Before, an operator's
-- transaction holding FOR UPDATE on one active job's row stalled a worker's whole pipeline: 4 of 40
-- unrelated jobs finished in 10 s and 4 ran twice once their leases ran out.)
-- Parameters: p_id[], p_lease_token[], p_kind[] ('completed' | 'retry' | 'dead' | 'snoozed'),
--             p_run_at[] (retry/snoozed), p_error[] (JSON text, retry/dead), p_result[] (JSON text
--             or NULL, completed), p_now (ms or NULL), then what each item's handler reported
--             since the last renewal (renew.sql): p_progress[] and p_logs[], NULL (the array, or an
--             item) to keep the stored one; both default to NULL, as a worker before migration
--             0018 calls it.
-- Returns: lost, the input positions (1-based) whose lease was lost, and locked, those whose row
--          another session holds locked; every other item is settled. Wakes the queues made ready,
--          and those with a concurrency limit or a group concurrency limit (queue control) whatever
--          their jobs became: each settled job leaves room under the limit, which the queue's
--          waiters must hear of.
-- Relies on: the primary key (= ANY: by id whatever the join is estimated at); FOR UPDATE SKIP
--            LOCKED; the queues table (small: one row per queue with a setting), read once.
-- Settings: jit = off, lock_timeout = '5s', enable_seqscan = off (README.md).
CREATE OR REPLACE FUNCTION :"schema".settle(
  p_id bigint[], p_lease_token text[], p_kind text[], p_run_at bigint[], p_error text[], p_result text[],
  p_now bigint, p_progress text[] DEFAULT NULL, p_logs text[] DEFAULT NULL, OUT lost integer[],
  OUT locked integer[]
)
LANGUAGE plpgsql SET jit = off SET lock_timeout = '5s' SET enable_seqscan = off
AS $$
#variable_conflict use_column
DECLARE
  at bigint := coalesce(p_now, :"schema".now_ms());
  lockable bigint[];
  ready_queues text[];
  due_queues text[];
  due_at bigint[];
BEGIN
  lockable := ARRAY(SELECT j.id FROM :"schema".jobs AS j WHERE j.id = ANY (p_id) FOR UPDATE SKIP LOCKED);
  WITH item AS (
    SELECT * FROM unnest(p_id, p_lease_token, p_kind, p_run_at, p_error, p_result, p_progress, p_logs)
                  WITH ORDINALITY AS i(id, lease_token, kind, run_at, error, result, progress, logs, ord)
  ), settled AS (
    UPDATE :"schema".jobs AS j
    SET state = CASE
                  WHEN item.kind IN ('completed', 'dead') THEN item.kind
                  WHEN item.run_at <= at THEN 'ready'
                  ELSE 'scheduled'
                END,
        run_at = CASE WHEN item.kind IN ('retry', 'snoozed') THEN item.run_at ELSE j.run_at END,
        attempts = j.attempts - CASE WHEN item.kind = 'snoozed' THEN 1 ELSE 0 END,
        result = CASE WHEN item.kind = 'completed' THEN item.result ELSE j.result END,
        last_error = coalesce(item.error, j.last_error),
        progress = coalesce(item.progress, j.progress),
        logs = coalesce(item.logs, j.logs),
        finished_at = CASE WHEN item.kind IN ('completed', 'dead') THEN at END,
        -- A key that frees when its job finishes frees here (migration 0016).
        held_unique_key = CASE WHEN item.kind IN ('completed', 'dead') AND j.unique_until IS NOT NULL THEN NULL
                               ELSE j.held_unique_key END,
        updated_at = at, lease_token = NULL, lease_expires_at = NULL, worker_id = NULL
    FROM item
    -- = ANY(lockable): by primary key, whatever the join is estimated at; and only rows this call holds.
    WHERE j.id = item.id AND j.id = ANY (lockable) AND j.state = 'active' AND j.lease_token = item.lease_token
    RETURNING item.ord, j.queue, j.state, j.run_at
  ), unsettled AS (
    SELECT item.ord, item.id FROM item WHERE item.ord NOT IN (SELECT s.ord FROM settled AS s)
  )
  SELECT (SELECT array_agg(u.ord::integer ORDER BY u.ord) FROM unsettled AS u
          WHERE u.id IS NULL OR u.id = ANY (lockable)
             OR NOT EXISTS (SELECT 1 FROM :"schema".jobs AS j WHERE j.id = u.id)),
         (SELECT array_agg(u.ord::integer ORDER BY u.ord) FROM unsettled AS u
          WHERE u.id IS NOT NULL AND NOT u.id = ANY (lockable)
            AND EXISTS (SELECT 1 FROM :"schema".jobs AS j WHERE j.id = u.id)),
         (SELECT array_agg(DISTINCT s.queue) FROM settled AS s
          WHERE s.state = 'ready'
             OR s.queue IN (SELECT c.queue FROM :"schema".queues AS c
                            WHERE c.concurrency IS NOT NULL OR c.group_concurrency IS NOT NULL)),
         (SELECT array_agg(s.queue) FROM settled AS s WHERE s.state = 'scheduled'),
         (SELECT array_agg(s.run_at) FROM settled AS s WHERE s.state = 'scheduled')
  INTO lost, locked, ready_queues, due_queues, due_at;
  PERFORM :"schema".wake(ready_queues, due_queues, due_at);
  lost := coalesce(lost, '{}');
  locked := coalesce(locked, '{}');
END
$$;
