-- A row locked outside Ferry delays only its own job.
--
-- An operator's transaction holding FOR UPDATE on one active job's row stalled a worker's whole
-- pipeline, silently: the settlement of a batch waited for that row, and the renewal of every
-- lease the worker held with it, so 4 of 40 unrelated jobs finished in 10 s and 4 ran twice once
-- their leases ran out. Now the worker's statements lock the rows they change with SKIP LOCKED,
-- and a row they cannot lock is reported per item, as 'locked' (the store's SettleResult): the
-- worker writes that outcome again later, keeps that lease, and says so as a worker error, while
-- every other item of the batch goes through. Each also runs with a lock_timeout, so nothing they
-- do can wait long on a lock (every wait that is left is on Ferry's own short transactions).

-- settle as in 0001_init.sql, with the rows it cannot lock now left out and reported.
-- Returns lost, the input positions (1-based) whose lease was lost, and locked, those whose row
-- another session holds locked (nothing was written for them).
DROP FUNCTION :"schema".settle_and_claim(bigint[], text[], text[], bigint[], text[], text[], text[], integer, bigint,
                                         text, bigint);
DROP FUNCTION :"schema".settle(bigint[], text[], text[], bigint[], text[], text[], bigint);

CREATE FUNCTION :"schema".settle(
  p_id bigint[], p_lease_token text[], p_kind text[], p_run_at bigint[], p_error text[], p_result text[],
  p_now bigint, OUT lost integer[], OUT locked integer[]
)
LANGUAGE plpgsql
SET jit = off
SET lock_timeout = '5s'
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
    SELECT * FROM unnest(p_id, p_lease_token, p_kind, p_run_at, p_error, p_result) WITH ORDINALITY
                  AS i(id, lease_token, kind, run_at, error, result, ord)
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
        finished_at = CASE WHEN item.kind IN ('completed', 'dead') THEN at END,
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
         (SELECT array_agg(DISTINCT s.queue) FROM settled AS s WHERE s.state = 'ready'),
         (SELECT array_agg(s.queue) FROM settled AS s WHERE s.state = 'scheduled'),
         (SELECT array_agg(s.run_at) FROM settled AS s WHERE s.state = 'scheduled')
  INTO lost, locked, ready_queues, due_queues, due_at;
  PERFORM :"schema".wake(ready_queues, due_queues, due_at);
  lost := coalesce(lost, '{}');
  locked := coalesce(locked, '{}');
END
$$;

-- settleAndClaim as in 0001_init.sql, carrying settle's locked positions beside the lost ones.
-- Returns the claimed rows in claim order, each with lost and locked; when nothing is claimed, one
-- row whose job columns are all NULL carries them.
CREATE FUNCTION :"schema".settle_and_claim(
  p_id bigint[], p_lease_token text[], p_kind text[], p_run_at bigint[], p_error text[], p_result text[],
  p_queues text[], p_limit integer, p_lease_ms bigint, p_worker_id text, p_now bigint
) RETURNS TABLE (lost integer[], locked integer[], job :"schema".jobs)
LANGUAGE plpgsql
SET jit = off
SET lock_timeout = '5s'
AS $$
#variable_conflict use_column
DECLARE
  lost_items integer[];
  locked_items integer[];
BEGIN
  SELECT s.lost, s.locked INTO lost_items, locked_items
  FROM :"schema".settle(p_id, p_lease_token, p_kind, p_run_at, p_error, p_result, p_now) AS s;
  RETURN QUERY SELECT lost_items, locked_items, c
               FROM :"schema".claim(p_queues, p_limit, p_lease_ms, p_worker_id, p_now) AS c;
  IF NOT FOUND THEN
    RETURN QUERY SELECT lost_items, locked_items, NULL:::"schema".jobs;
  END IF;
END
$$;

-- renew: extends a batch of leases, fenced by the lease token (sql/renew.sql before: a statement
-- that waited for a locked row, and every lease of the batch with it). An expired but not yet
-- recovered lease may still be renewed, since nobody else can hold the job until recovery. A
-- renewal also ends a delivery for good: take_delivered's commit is not flushed, and one lost in a
-- server crash must not make a job that ran look never taken.
-- Returns one row per input lease: its position (1-based) and 'ok', 'lease_lost' or 'locked'.
CREATE FUNCTION :"schema".renew(p_id bigint[], p_lease_token text[], p_lease_ms bigint, p_now bigint)
RETURNS TABLE (ord integer, result text)
LANGUAGE plpgsql
SET jit = off
SET lock_timeout = '5s'
AS $$
#variable_conflict use_column
DECLARE
  at bigint := coalesce(p_now, :"schema".now_ms());
  lockable bigint[];
  renewed integer[];
BEGIN
  lockable := ARRAY(SELECT j.id FROM :"schema".jobs AS j WHERE j.id = ANY (p_id) FOR UPDATE SKIP LOCKED);
  WITH done AS (
    UPDATE :"schema".jobs AS j
    SET lease_expires_at = at + p_lease_ms, updated_at = at, delivered = false
    FROM unnest(p_id, p_lease_token) WITH ORDINALITY AS l(id, lease_token, ord)
    WHERE j.id = l.id AND j.id = ANY (lockable) AND j.state = 'active' AND j.lease_token = l.lease_token
    RETURNING l.ord
  )
  SELECT array_agg(done.ord::integer) INTO renewed FROM done;
  RETURN QUERY
  SELECT l.ord::integer,
         CASE
           WHEN l.ord = ANY (coalesce(renewed, '{}')) THEN 'ok'
           WHEN l.id IS NOT NULL AND NOT l.id = ANY (lockable)
                AND EXISTS (SELECT 1 FROM :"schema".jobs AS j WHERE j.id = l.id) THEN 'locked'
           ELSE 'lease_lost'
         END
  FROM unnest(p_id) WITH ORDINALITY AS l(id, ord);
END
$$;

-- take_delivered as in 0005_leases_across_clock_steps.sql, passing over rows locked elsewhere: such
-- a job is not taken (its delivery lease runs out and recovery, which skips it while it is locked,
-- puts it back in line afterwards).
CREATE OR REPLACE FUNCTION :"schema".take_delivered(p_id bigint[], p_lease_token text[], p_lease_ms bigint, p_now bigint)
RETURNS SETOF integer
LANGUAGE plpgsql
SET jit = off
SET lock_timeout = '5s'
AS $$
#variable_conflict use_column
DECLARE
  at bigint := coalesce(p_now, :"schema".now_ms());
  lockable bigint[];
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  lockable := ARRAY(SELECT j.id FROM :"schema".jobs AS j WHERE j.id = ANY (p_id) FOR UPDATE SKIP LOCKED);
  RETURN QUERY
  UPDATE :"schema".jobs AS j
  SET lease_expires_at = at + p_lease_ms, updated_at = at, delivered = false
  FROM unnest(p_id, p_lease_token) WITH ORDINALITY AS l(id, lease_token, ord)
  WHERE j.id = l.id AND j.id = ANY (lockable) AND j.state = 'active' AND j.lease_token = l.lease_token
  RETURNING l.ord::integer;
END
$$;
