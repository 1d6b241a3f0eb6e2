-- Delivery (Store.waitForJobs): a worker that waits registers itself in `waiters`, and an enqueue
-- that finds it there claims jobs for it inside the enqueue's own transaction (the same claim()
-- as the worker's, so the same order) and sends the leased rows with the wake-up. The worker
-- starts them without a claim of its own: one round trip and one WAL flush fewer between an
-- enqueue and its handler.
--
-- Liveness, without timeouts: the listening connection of each store holds a session-level
-- advisory lock on a random key (lock_key) for as long as it lives. An enqueue that can take that
-- key's lock in shared mode (pg_try_advisory_xact_lock_shared succeeds) knows the connection is
-- gone, the waiter with it (a crashed or closed process, a terminated backend): it deletes the
-- row and hands it nothing.

-- One row per waiting worker. UNLOGGED: no WAL for a registration, and a crash empties the table,
-- which is right, since every waiter of the crashed server is gone with its connection.
CREATE UNLOGGED TABLE :"schema".waiters (
  id            text    PRIMARY KEY,
  queues        text[]  NOT NULL, -- in the worker's order: the claim's strict queue order
  lim           integer NOT NULL,
  lease_ms      bigint  NOT NULL,
  worker_id     text    NOT NULL,
  channel       text    NOT NULL, -- the store's own channel, 'ferry:<schema>:<8 hex>'
  lock_key      bigint  NOT NULL, -- held by the store's listening connection while it lives
  registered_at bigint  NOT NULL
);

-- wake, as in 0001_init.sql, and it takes out the registrations of the waiters it wakes: every
-- waiter of a queue named in the message (of every queue, for '*') is woken by it and ends its
-- wait, so an enqueue that came after this commit and handed it jobs would only have them given
-- back. The waiter's own delete, sent when it wakes, leaves that open for a round trip. Rows
-- locked by a concurrent delivery are left to it.
-- Measured with 2-4 producers enqueuing 1,500 jobs one at a time (0-4 ms apart) and 3-4 stores
-- waiting, claiming and settling in a loop (a busy queue, where most wake-ups find nothing: the
-- same before delivery), 3 runs of 2 setups: jobs given back 187-255 without this, 148-194 with
-- it, and 96-125 once the store also hands a late delivery to the same worker's next wait.
CREATE OR REPLACE FUNCTION :"schema".wake(p_ready text[], p_due_queues text[], p_due_at bigint[]) RETURNS void
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
DECLARE
  message text;
BEGIN
  SELECT string_agg(item, ',') INTO message
  FROM (
    SELECT DISTINCT q AS item FROM unnest(p_ready) AS q WHERE q IS NOT NULL
    UNION ALL
    SELECT d.q || '@' || min(d.at) FROM unnest(p_due_queues, p_due_at) AS d(q, at) WHERE d.q IS NOT NULL GROUP BY d.q
  ) AS items;
  IF message IS NULL THEN
    RETURN;
  END IF;
  IF length(message) > 7900 THEN
    message := '*';
  END IF;
  IF message = '*' OR cardinality(p_ready) > 0 THEN
    DELETE FROM :"schema".waiters AS w
    WHERE w.id = ANY (ARRAY(
      SELECT x.id FROM :"schema".waiters AS x
      WHERE message = '*' OR x.queues && p_ready
      FOR UPDATE SKIP LOCKED
    ));
  END IF;
  PERFORM pg_notify('ferry:' || :'schema', message);
END
$$;

-- deliver: hands the jobs just made ready to waiters of their queues, first registered first.
-- Each waiter is locked as it is looked at, one at a time (FOR UPDATE SKIP LOCKED, LIMIT 1: a
-- cursor would lock the rows it prefetches, and a concurrent enqueue would pass over waiters this
-- one never serves). A dead waiter is deleted; a live one gets claim() with its queues, limit,
-- lease and worker id, at p_at (the enqueue's instant); if that claimed anything, its row is
-- deleted (a waiter is handed jobs once) and the rows are sent on its channel as
--   {"w": waiter id, "jobs": [[id, queue, name, payload, state, priority, run_at, attempts,
--     max_attempts, timeout_ms, unique_key, lease_token, lease_expires_at, worker_id, last_error,
--     result, created_at, updated_at, finished_at], …]}   (bigint columns as text)
-- or, when that would pass NOTIFY's 8000 bytes, {"w": waiter id, "ids": ["id", …]}, which the
-- waiter's store reads (the jobs are leased to it already). At most 256 jobs per delivery, so the
-- ids always fit; what is left stays ready and its waiters are woken as usual.
-- Bounded: it looks at no more than p_ready_count + 16 waiters (one job each at least, and a few
-- dead ones), and stops as soon as no ready job is left on the queues of the batch.
-- Returns the queues of p_ready_queues that still have a ready job: those to wake (wake()).
CREATE FUNCTION :"schema".deliver(p_ready_queues text[], p_ready_count integer, p_at bigint) RETURNS text[]
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
      FROM :"schema".claim(w.queues, least(w.lim, 256), w.lease_ms, w.worker_id, p_at) WITH ORDINALITY AS c;
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

-- enqueue_batch as in 0002_enqueue_without_unique_keys.sql, with p_deliver: when true, the ready
-- jobs of the batch are first offered to waiting workers (deliver()), and only the queues that
-- still have ready jobs are woken. Only the store's own enqueue passes true: not a transactional
-- enqueue, nor the SQL enqueue() (the 10-argument form below), whose caller's transaction may stay
-- open long past the instant the leases would start from.
-- The deliveries are notified before the wake-up, so a store that is sent both (its waiter handed
-- jobs, and the queue still ready) hears of the delivery first.
-- Without any waiter this costs one probe of the (small) waiters table.
CREATE FUNCTION :"schema".enqueue_batch(
  p_queue text[], p_name text[], p_payload text[], p_priority integer[], p_run_at bigint[],
  p_delay_ms bigint[], p_max_attempts integer[], p_timeout_ms integer[], p_unique_key text[], p_now bigint,
  p_deliver boolean
) RETURNS TABLE (id bigint, created boolean)
LANGUAGE plpgsql
SET jit = off
AS $$
#variable_conflict use_column
DECLARE
  at bigint := coalesce(p_now, :"schema".now_ms());
  seq regclass := (:'schema' || '.jobs_id_seq')::regclass;
  ids bigint[];
  created_flags boolean[];
  ready_queues text[];
  ready_count integer;
  due_queues text[];
  due_at bigint[];
BEGIN
  IF NOT EXISTS (SELECT 1 FROM unnest(p_unique_key) AS k WHERE k IS NOT NULL) THEN
    ids := ARRAY(SELECT nextval(seq) FROM generate_series(1, cardinality(p_queue)));
    INSERT INTO :"schema".jobs (id, queue, name, payload, state, priority, run_at, max_attempts, timeout_ms,
                                created_at, updated_at)
    SELECT i.id, i.queue, i.name, i.payload,
           CASE WHEN coalesce(i.run_at, at + i.delay_ms) <= at THEN 'ready' ELSE 'scheduled' END,
           i.priority, coalesce(i.run_at, at + i.delay_ms), i.max_attempts, i.timeout_ms, at, at
    FROM unnest(ids, p_queue, p_name, p_payload, p_priority, p_run_at, p_delay_ms, p_max_attempts, p_timeout_ms)
         AS i(id, queue, name, payload, priority, run_at, delay_ms, max_attempts, timeout_ms);
    SELECT array_agg(DISTINCT d.queue) FILTER (WHERE d.run_at <= at),
           count(*) FILTER (WHERE d.run_at <= at),
           array_agg(d.queue) FILTER (WHERE d.run_at > at),
           array_agg(d.run_at) FILTER (WHERE d.run_at > at)
    INTO ready_queues, ready_count, due_queues, due_at
    FROM (SELECT u.queue, coalesce(u.run_at, at + u.delay_ms) AS run_at
          FROM unnest(p_queue, p_run_at, p_delay_ms) AS u(queue, run_at, delay_ms)) AS d;
  ELSE
    -- Some job has a unique key: as in 0001_init.sql.
    WITH input AS (
      SELECT nextval(seq) AS id, i.ord, i.queue, i.name, i.payload, i.priority,
             coalesce(i.run_at, at + i.delay_ms) AS run_at, i.max_attempts, i.timeout_ms, i.unique_key
      FROM unnest(p_queue, p_name, p_payload, p_priority, p_run_at, p_delay_ms, p_max_attempts, p_timeout_ms,
                  p_unique_key) WITH ORDINALITY
           AS i(queue, name, payload, priority, run_at, delay_ms, max_attempts, timeout_ms, unique_key, ord)
    ), inserted AS (
      INSERT INTO :"schema".jobs AS j (id, queue, name, payload, state, priority, run_at, max_attempts, timeout_ms,
                                       unique_key, created_at, updated_at)
      SELECT input.id, input.queue, input.name, input.payload,
             CASE WHEN input.run_at <= at THEN 'ready' ELSE 'scheduled' END,
             input.priority, input.run_at, input.max_attempts, input.timeout_ms, input.unique_key, at, at
      FROM input ORDER BY input.ord
      ON CONFLICT (unique_key) WHERE unique_key IS NOT NULL DO NOTHING
      RETURNING j.id, j.queue, j.state, j.run_at, j.unique_key
    ), result AS (
      SELECT input.ord, coalesce(own.id, batch_holder.id, holder.id) AS id, own.id IS NOT NULL AS created
      FROM input
      LEFT JOIN inserted AS own ON own.id = input.id
      LEFT JOIN inserted AS batch_holder ON own.id IS NULL AND batch_holder.unique_key = input.unique_key
      LEFT JOIN :"schema".jobs AS holder ON own.id IS NULL AND batch_holder.id IS NULL
                                        AND holder.unique_key = input.unique_key
    )
    SELECT (SELECT array_agg(r.id ORDER BY r.ord) FROM result AS r),
           (SELECT array_agg(r.created ORDER BY r.ord) FROM result AS r),
           (SELECT array_agg(DISTINCT s.queue) FROM inserted AS s WHERE s.state = 'ready'),
           (SELECT count(*) FROM inserted AS s WHERE s.state = 'ready'),
           (SELECT array_agg(s.queue) FROM inserted AS s WHERE s.state = 'scheduled'),
           (SELECT array_agg(s.run_at) FROM inserted AS s WHERE s.state = 'scheduled')
    INTO ids, created_flags, ready_queues, ready_count, due_queues, due_at;
  END IF;
  IF p_deliver AND ready_queues IS NOT NULL
     AND EXISTS (SELECT 1 FROM :"schema".waiters AS w WHERE w.queues && ready_queues) THEN
    ready_queues := :"schema".deliver(ready_queues, ready_count, at);
  END IF;
  PERFORM :"schema".wake(ready_queues, due_queues, due_at);
  IF created_flags IS NULL THEN
    RETURN QUERY SELECT u.id, true FROM unnest(ids) AS u(id);
  ELSE
    RETURN QUERY SELECT * FROM unnest(ids, created_flags);
  END IF;
END
$$;

-- The 10-argument enqueue_batch of 0001/0002, which the SQL enqueue() calls: the same, without
-- delivery (one implementation for both).
CREATE OR REPLACE FUNCTION :"schema".enqueue_batch(
  p_queue text[], p_name text[], p_payload text[], p_priority integer[], p_run_at bigint[],
  p_delay_ms bigint[], p_max_attempts integer[], p_timeout_ms integer[], p_unique_key text[], p_now bigint
) RETURNS TABLE (id bigint, created boolean)
LANGUAGE sql
AS $$
  SELECT e.id, e.created
  FROM :"schema".enqueue_batch(p_queue, p_name, p_payload, p_priority, p_run_at, p_delay_ms, p_max_attempts,
                               p_timeout_ms, p_unique_key, p_now, false) AS e
$$;
