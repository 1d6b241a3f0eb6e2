-- Leases that survive clock steps, and deliveries their waiter may never take.
--
-- Delivery (0003_delivery.sql) leased jobs to a waiting worker for the worker's whole lease, with
-- the attempt counted. A waiter that froze (SIGSTOP) or stalled with a delivery in its socket
-- buffer cost the job an attempt and a full lease, and with one attempt the job ended dead
-- "lease expired" without ever running; the thawed worker then ran it anyway. Now a delivered job
-- holds a short delivery lease (2,000 ms at most: DELIVERY_LEASE_MS in src/store/store.ts) and is
-- marked `delivered` until its worker takes it (take_delivered, fenced by the token) before it
-- starts it; one never taken is put back by recover_expired with its attempt given back.
--
-- Recovery (sql/recover-expired.sql before) took whatever had expired by the server's clock at
-- that instant, so a forward step of the clock took every running job from its healthy worker.
-- The worker's recoverer now reads the expired leases first (sql/find-expired-leases.sql), judges
-- the server's clock against its own monotonic one, and recovers only the leases it names, each if
-- still exactly as it saw it (token and expiry). After a backward step, clamp_leases (sql/
-- clamp-leases.sql) brings leases set in the "future" back to one length from now.

-- True while an active job was delivered to a waiter that has not taken it yet. Meaningful only
-- while state = 'active': every claim sets it.
ALTER TABLE :"schema".jobs ADD COLUMN delivered boolean NOT NULL DEFAULT false;

-- claim as in 0001_init.sql, and with p_delivered (deliver() passes true) it marks the jobs delivered.
-- The table gained a column, so the function is made again, with the column in its result.
DROP FUNCTION :"schema".claim(text[], integer, bigint, text, bigint);

CREATE FUNCTION :"schema".claim(
  p_queues text[], p_limit integer, p_lease_ms bigint, p_worker_id text, p_now bigint,
  p_delivered boolean DEFAULT false
) RETURNS SETOF :"schema".jobs
LANGUAGE plpgsql
SET jit = off
AS $$
#variable_conflict use_column
DECLARE
  at bigint := coalesce(p_now, :"schema".now_ms());
BEGIN
  -- = ANY(ARRAY(…)) looks the due ids up by primary key whatever the planner estimates: written as
  -- id IN (…), the generic plan (which guesses a third of the scheduled jobs due) hashed the due ids
  -- and joined them to a sequential scan of the whole table, which costs nothing while no job is due
  -- and the whole backlog as soon as one is (EXPLAIN at 1,000,000 jobs, bench postgres-claim).
  UPDATE :"schema".jobs AS j SET state = 'ready', updated_at = at
  WHERE j.id = ANY (ARRAY(
    SELECT due.id
    FROM unnest(p_queues) AS q(name)
    CROSS JOIN LATERAL (
      SELECT s.id FROM :"schema".jobs AS s
      WHERE s.state = 'scheduled' AND s.queue = q.name AND s.run_at <= at
      FOR UPDATE SKIP LOCKED
    ) AS due
  ));
  RETURN QUERY
  WITH picked AS (
    SELECT c.id, q.ord
    FROM unnest(p_queues) WITH ORDINALITY AS q(name, ord)
    CROSS JOIN LATERAL (
      SELECT r.id FROM :"schema".jobs AS r
      WHERE r.state = 'ready' AND r.queue = q.name
      ORDER BY r.priority DESC, r.run_at, r.id
      LIMIT p_limit
      FOR UPDATE SKIP LOCKED
    ) AS c
    LIMIT p_limit
  ), leased AS (
    UPDATE :"schema".jobs AS j
    SET state = 'active', attempts = j.attempts + 1, lease_token = replace(gen_random_uuid()::text, '-', ''),
        lease_expires_at = at + p_lease_ms, worker_id = p_worker_id, updated_at = at, delivered = p_delivered
    FROM picked
    WHERE j.id = picked.id AND j.id = ANY (ARRAY(SELECT p.id FROM picked AS p))
    RETURNING j.*, picked.ord
  )
  SELECT l.id, l.queue, l.name, l.payload, l.state, l.priority, l.run_at, l.attempts, l.max_attempts,
         l.timeout_ms, l.unique_key, l.lease_token, l.lease_expires_at, l.worker_id, l.last_error, l.result,
         l.created_at, l.updated_at, l.finished_at, l.delivered
  FROM leased AS l
  ORDER BY l.ord, l.priority DESC, l.run_at, l.id;
END
$$;

-- deliver as in 0003_delivery.sql, but the jobs it hands over hold a delivery lease of at most
-- 2,000 ms (the waiter's own lease if shorter) and are marked delivered.
CREATE OR REPLACE FUNCTION :"schema".deliver(p_ready_queues text[], p_ready_count integer, p_at bigint) RETURNS text[]
LANGUAGE plpgsql
SET jit = off
AS $$
#variable_conflict use_column
DECLARE
  w :"schema".waiters;
  remaining text[] := p_ready_queues;
  looked integer := 0;
  served integer := 0;
  claimed integer;
  job_rows json;
  job_ids json;
  message text;
BEGIN
  LOOP
    -- Waiters in registration order, each after the last one looked at.
    SELECT x.* INTO w
    FROM :"schema".waiters AS x
    WHERE x.queues && remaining
      AND (looked = 0 OR (x.registered_at, x.id) > (w.registered_at, w.id))
    ORDER BY x.registered_at, x.id
    LIMIT 1
    FOR UPDATE SKIP LOCKED;
    EXIT WHEN NOT FOUND;
    looked := looked + 1;
    IF pg_try_advisory_xact_lock_shared(w.lock_key) THEN
      -- Nobody holds the key: the waiter's listening connection is gone.
      DELETE FROM :"schema".waiters AS x WHERE x.id = w.id;
    ELSE
      SELECT json_agg(json_build_array(c.id::text, c.queue, c.name, c.payload, c.state, c.priority,
                                       c.run_at::text, c.attempts, c.max_attempts, c.timeout_ms, c.unique_key,
                                       c.lease_token, c.lease_expires_at::text, c.worker_id, c.last_error,
                                       c.result, c.created_at::text, c.updated_at::text, c.finished_at::text)
                      ORDER BY c.ordinality),
             json_agg(c.id::text ORDER BY c.ordinality),
             count(*)
      INTO job_rows, job_ids, claimed
      FROM :"schema".claim(w.queues, least(w.lim, 256), least(w.lease_ms, 2000), w.worker_id, p_at, true)
           WITH ORDINALITY AS c;
      -- Claimed nothing (earlier waiters took it all): it keeps waiting.
      IF claimed > 0 THEN
        DELETE FROM :"schema".waiters AS x WHERE x.id = w.id;
        message := json_build_object('w', w.id, 'jobs', job_rows)::text;
        IF octet_length(message) > 7900 THEN
          message := json_build_object('w', w.id, 'ids', job_ids)::text;
        END IF;
        PERFORM pg_notify(w.channel, message);
        served := served + 1;
        -- jobs_ready, one seek per queue.
        remaining := ARRAY(
          SELECT q.name FROM unnest(remaining) AS q(name)
          WHERE EXISTS (SELECT 1 FROM :"schema".jobs AS j WHERE j.state = 'ready' AND j.queue = q.name)
        );
        EXIT WHEN cardinality(remaining) = 0 OR served >= p_ready_count;
      END IF;
    END IF;
    EXIT WHEN looked >= p_ready_count + 16;
  END LOOP;
  RETURN remaining;
END
$$;

-- take_delivered: a worker takes jobs it was handed, before it starts them: each gets the worker's
-- lease and stops being a delivery. Fenced by the token; a job whose delivery lease ran out and
-- was put back (or claimed again) is not this worker's any more.
-- Its commit need not wait for the WAL flush (synchronous_commit off for this transaction only):
-- the delivery that leased the job was flushed, and a take lost in a server crash only leaves the
-- job a delivery again, which recovery puts back in line. That keeps one flush off the path from
-- an enqueue to its handler, which delivery exists to shorten.
-- Returns the input positions (1-based) taken.
CREATE FUNCTION :"schema".take_delivered(p_id bigint[], p_lease_token text[], p_lease_ms bigint, p_now bigint)
RETURNS SETOF integer
LANGUAGE plpgsql
SET jit = off
AS $$
#variable_conflict use_column
DECLARE
  at bigint := coalesce(p_now, :"schema".now_ms());
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  RETURN QUERY
  UPDATE :"schema".jobs AS j
  SET lease_expires_at = at + p_lease_ms, updated_at = at, delivered = false
  FROM unnest(p_id, p_lease_token) WITH ORDINALITY AS l(id, lease_token, ord)
  WHERE j.id = l.id AND j.id = ANY (p_id) AND j.state = 'active' AND j.lease_token = l.lease_token
  RETURNING l.ord::integer;
END
$$;

-- recover_expired: leases that ran out go back. With p_id NULL: any of them, oldest expiry first,
-- at most p_limit; else only the leases given, each if still exactly as seen (token and expiry)
-- and run out. A job that was only delivered (its waiter never took it) is ready again with its
-- attempt given back and its last error kept: it never ran. Otherwise the attempt stays counted;
-- with attempts left the job is ready again at its old run_at (its place in line), else dead.
-- Safe on every worker at once: SKIP LOCKED hands each job to one sweep, the others pass over it.
-- Returns id, state of each recovered job; wakes the workers of the queues made ready.
CREATE FUNCTION :"schema".recover_expired(
  p_now bigint, p_limit integer, p_id bigint[], p_lease_token text[], p_lease_expires_at bigint[]
) RETURNS TABLE (id bigint, state text)
LANGUAGE plpgsql
SET jit = off
AS $$
#variable_conflict use_column
DECLARE
  at bigint := coalesce(p_now, :"schema".now_ms());
  expired bigint[];
  ready_queues text[];
BEGIN
  IF p_id IS NULL THEN
    expired := ARRAY(
      SELECT j.id FROM :"schema".jobs AS j
      WHERE j.state = 'active' AND j.lease_expires_at <= at
      ORDER BY j.lease_expires_at
      LIMIT p_limit
      FOR UPDATE SKIP LOCKED
    );
  ELSE
    expired := ARRAY(
      SELECT j.id
      FROM unnest(p_id, p_lease_token, p_lease_expires_at) AS l(id, lease_token, lease_expires_at)
      JOIN :"schema".jobs AS j ON j.id = l.id
      WHERE j.id = ANY (p_id) AND j.state = 'active' AND j.lease_token = l.lease_token
        AND j.lease_expires_at = l.lease_expires_at AND j.lease_expires_at <= at
      FOR UPDATE OF j SKIP LOCKED
    );
  END IF;
  RETURN QUERY
  WITH recovered AS (
    UPDATE :"schema".jobs AS j
    SET state = CASE WHEN NOT j.delivered AND j.attempts >= j.max_attempts THEN 'dead' ELSE 'ready' END,
        attempts = j.attempts - CASE WHEN j.delivered THEN 1 ELSE 0 END,
        finished_at = CASE WHEN NOT j.delivered AND j.attempts >= j.max_attempts THEN at END,
        last_error = CASE
                       WHEN j.delivered THEN j.last_error
                       ELSE json_build_object(
                              'kind', 'lease_expired',
                              'message', 'lease expired: worker ' || coalesce(j.worker_id, '?')
                                         || ' stopped renewing it (attempt ' || j.attempts || ' of '
                                         || j.max_attempts || ')')::text
                     END,
        lease_token = NULL, lease_expires_at = NULL, worker_id = NULL, delivered = false, updated_at = at
    -- By primary key whatever the estimates (this runs with a generic plan).
    WHERE j.id = ANY (expired)
    RETURNING j.id, j.state, j.queue
  ), woken AS (
    SELECT :"schema".wake(array_agg(DISTINCT r.queue), NULL, NULL) FROM recovered AS r WHERE r.state = 'ready'
  )
  SELECT r.id, r.state FROM recovered AS r, (SELECT count(*) FROM woken) AS w;
END
$$;
