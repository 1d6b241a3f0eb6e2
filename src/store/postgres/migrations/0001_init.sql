-- The jobs table, its indexes, and the functions that make each hot-path Store call one round trip.
-- Written for psql-style interpolation: :"schema" is the schema (a quoted identifier) and :'schema'
-- the same name as a string literal; the store substitutes both with a validated name.
-- Times are epoch milliseconds (bigint); JSON columns hold JSON text, returned exactly as stored.

CREATE TABLE :"schema".jobs (
  id               bigserial PRIMARY KEY, -- a sequence: ids grow in enqueue order and are never reused
  queue            text    NOT NULL,
  name             text    NOT NULL,
  payload          text    NOT NULL,
  state            text    NOT NULL CHECK (state IN ('scheduled', 'ready', 'active', 'completed', 'dead')),
  priority         integer NOT NULL,
  run_at           bigint  NOT NULL,
  attempts         integer NOT NULL DEFAULT 0,
  max_attempts     integer NOT NULL,
  timeout_ms       integer,
  unique_key       text,
  lease_token      text,
  lease_expires_at bigint,
  worker_id        text,
  last_error       text,
  result           text,
  created_at       bigint  NOT NULL,
  updated_at       bigint  NOT NULL,
  finished_at      bigint
);

-- claim: one index range per queue, already in claim order, so the first row read is the next job
-- whatever the backlog. Partial: a job is in it only while ready.
CREATE INDEX jobs_ready ON :"schema".jobs (queue, priority DESC, run_at, id) WHERE state = 'ready';

-- claim promotes the due scheduled jobs of its queues; waitForWork arms its timer at their earliest run_at.
CREATE INDEX jobs_scheduled ON :"schema".jobs (queue, run_at) WHERE state = 'scheduled';

-- recoverExpired: active jobs in lease-expiry order.
CREATE INDEX jobs_active ON :"schema".jobs (lease_expires_at) WHERE state = 'active';

-- purge, retry --all-dead, and the recent counts of stats.
CREATE INDEX jobs_finished ON :"schema".jobs (state, finished_at) WHERE finished_at IS NOT NULL;

-- enqueue: a key is held while its job exists.
CREATE UNIQUE INDEX jobs_unique_key ON :"schema".jobs (unique_key) WHERE unique_key IS NOT NULL;

-- Requests from operators to every worker on the store, e.g. `ferry stop-workers`. One row per
-- kind of request; `at` is when it was last made (epoch ms).
CREATE TABLE :"schema".control (
  key text PRIMARY KEY,
  at  bigint NOT NULL
);

-- The store's clock when a call gives no `now`: the server's, so workers on many hosts agree on
-- what is due and what has expired. statement_timestamp() is fixed for the statement (the whole
-- function call), so every row a call touches gets the same instant.
CREATE FUNCTION :"schema".now_ms() RETURNS bigint
LANGUAGE sql STABLE PARALLEL SAFE
AS $$ SELECT floor(extract(epoch FROM statement_timestamp()) * 1000)::bigint $$;

-- Wakes waiting workers, in every process, once the transaction commits (NOTIFY is transactional).
-- The message lists queue names (ready work there) and queue@ms items (a job of that queue is due
-- at ms); '*' wakes everyone (a stop request, or a message too long for NOTIFY's 8000 bytes).
-- Queue names cannot contain ',', '@' or '*' (core/validate.ts), so the message is unambiguous.
CREATE FUNCTION :"schema".wake(p_ready text[], p_due_queues text[], p_due_at bigint[]) RETURNS void
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
  PERFORM pg_notify('ferry:' || :'schema', message);
END
$$;

-- enqueue: inserts a batch in one statement, in input order; a job whose unique key is taken (also
-- by an earlier job of the same batch) is not inserted and the holder's id is returned instead.
-- Ids are drawn from the sequence in input order before the insert, so each input row knows its id.
-- Returns one row per input job, in input order: id (NULL only when the key's holder committed after
-- this statement began: read it again), created.
CREATE FUNCTION :"schema".enqueue_batch(
  p_queue text[], p_name text[], p_payload text[], p_priority integer[], p_run_at bigint[],
  p_delay_ms bigint[], p_max_attempts integer[], p_timeout_ms integer[], p_unique_key text[], p_now bigint
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
  due_queues text[];
  due_at bigint[];
BEGIN
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
         (SELECT array_agg(s.queue) FROM inserted AS s WHERE s.state = 'scheduled'),
         (SELECT array_agg(s.run_at) FROM inserted AS s WHERE s.state = 'scheduled')
  INTO ids, created_flags, ready_queues, due_queues, due_at;
  PERFORM :"schema".wake(ready_queues, due_queues, due_at);
  RETURN QUERY SELECT * FROM unnest(ids, created_flags);
END
$$;

-- claim: scheduled jobs of the claimed queues whose time has come become ready (they keep run_at,
-- so they take their place among ready jobs), then the next ready jobs are leased, queue by queue in
-- the order given, each queue read from jobs_ready in claim order. One call, so one round trip for
-- any number of queues. attempts counts the attempt now, so a worker that dies mid-job has used it.
--
-- Locking: FOR UPDATE SKIP LOCKED sits under each queue's LIMIT, so concurrent claims pass over each
-- other's rows instead of waiting, and the outer LIMIT stops the nested loop as soon as it has
-- p_limit rows: no row beyond those taken is locked, and later queues are not even read. The nested
-- loop reads the queues in ordinality order, which is what makes the queue order strict.
-- Returns the leased rows in claim order (queue order, then priority, run_at, id).
--
-- jit = off (here and on the other hot-path functions): plpgsql plans these statements once for
-- every call (a generic plan), which estimates the promotion's run_at <= now at a third of the
-- scheduled jobs; at 1,000,000 jobs that cost crossed jit_above_cost and every claim compiled
-- itself first: 29 ms per claim over 100 queues, 22.5 ms of it JIT (bench postgres-claim, EXPLAIN
-- through auto_explain), for statements that then ran in under 1.3 ms.
CREATE FUNCTION :"schema".claim(
  p_queues text[], p_limit integer, p_lease_ms bigint, p_worker_id text, p_now bigint
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
        lease_expires_at = at + p_lease_ms, worker_id = p_worker_id, updated_at = at
    FROM picked
    WHERE j.id = picked.id AND j.id = ANY (ARRAY(SELECT p.id FROM picked AS p))
    RETURNING j.*, picked.ord
  )
  SELECT l.id, l.queue, l.name, l.payload, l.state, l.priority, l.run_at, l.attempts, l.max_attempts,
         l.timeout_ms, l.unique_key, l.lease_token, l.lease_expires_at, l.worker_id, l.last_error, l.result,
         l.created_at, l.updated_at, l.finished_at
  FROM leased AS l
  ORDER BY l.ord, l.priority DESC, l.run_at, l.id;
END
$$;

-- settle: every outcome of a batch in one statement. Each item is fenced by its lease token: only
-- the holder of the current lease changes the job. A retry or snooze whose run time has come goes
-- straight back to ready; snoozed gives the attempt back and keeps the previous error.
-- p_kind: 'completed' | 'retry' | 'dead' | 'snoozed'; p_run_at for retry/snoozed; p_error (JSON text)
-- for retry/dead; p_result (JSON text or NULL) for completed.
-- Returns the input positions (1-based) whose lease was lost; every other item is settled.
CREATE FUNCTION :"schema".settle(
  p_id bigint[], p_lease_token text[], p_kind text[], p_run_at bigint[], p_error text[], p_result text[],
  p_now bigint
) RETURNS integer[]
LANGUAGE plpgsql
SET jit = off
AS $$
#variable_conflict use_column
DECLARE
  at bigint := coalesce(p_now, :"schema".now_ms());
  lost integer[];
  ready_queues text[];
  due_queues text[];
  due_at bigint[];
BEGIN
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
    -- = ANY(p_id): by primary key, whatever the join is estimated at.
    WHERE j.id = item.id AND j.id = ANY (p_id) AND j.state = 'active' AND j.lease_token = item.lease_token
    RETURNING item.ord, j.queue, j.state, j.run_at
  )
  SELECT (SELECT array_agg(item.ord::integer ORDER BY item.ord) FROM item
          WHERE item.ord NOT IN (SELECT s.ord FROM settled AS s)),
         (SELECT array_agg(DISTINCT s.queue) FROM settled AS s WHERE s.state = 'ready'),
         (SELECT array_agg(s.queue) FROM settled AS s WHERE s.state = 'scheduled'),
         (SELECT array_agg(s.run_at) FROM settled AS s WHERE s.state = 'scheduled')
  INTO lost, ready_queues, due_queues, due_at;
  PERFORM :"schema".wake(ready_queues, due_queues, due_at);
  RETURN coalesce(lost, '{}');
END
$$;

-- settleAndClaim: settle, then claim, in one transaction and one round trip; the claim sees the
-- settlements (a retry due now can be claimed by the same call). Returns the claimed rows in claim
-- order, each with the lost settlement positions; when nothing is claimed, one row whose job columns
-- are all NULL carries them.
CREATE FUNCTION :"schema".settle_and_claim(
  p_id bigint[], p_lease_token text[], p_kind text[], p_run_at bigint[], p_error text[], p_result text[],
  p_queues text[], p_limit integer, p_lease_ms bigint, p_worker_id text, p_now bigint
) RETURNS TABLE (lost integer[], job :"schema".jobs)
LANGUAGE plpgsql
SET jit = off
AS $$
#variable_conflict use_column
DECLARE
  lost_items integer[] := :"schema".settle(p_id, p_lease_token, p_kind, p_run_at, p_error, p_result, p_now);
BEGIN
  RETURN QUERY SELECT lost_items, c FROM :"schema".claim(p_queues, p_limit, p_lease_ms, p_worker_id, p_now) AS c;
  IF NOT FOUND THEN
    RETURN QUERY SELECT lost_items, NULL:::"schema".jobs;
  END IF;
END
$$;

-- enqueue from SQL: one job, for triggers, other languages and psql. Checks what Ferry's client
-- checks (names, ranges, payload size) and raises invalid_parameter_value for bad input; wakes the
-- workers when the caller's transaction commits. Returns the job's id (the existing job's id when
-- unique_key is already held). run_at NULL means now; times are the server's clock.
--   SELECT ferry.enqueue('send-email', '{"to": "a@example.com"}');
--   SELECT ferry.enqueue('report', '{}', queue => 'slow', run_at => now() + interval '1 hour');
CREATE FUNCTION :"schema".enqueue(
  name text, payload json, queue text DEFAULT 'default', priority integer DEFAULT 0,
  run_at timestamptz DEFAULT NULL, max_attempts integer DEFAULT 25, timeout_ms integer DEFAULT NULL,
  unique_key text DEFAULT NULL
) RETURNS bigint
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
DECLARE
  job_id bigint;
BEGIN
  IF name IS NULL OR name !~ '^[A-Za-z0-9._:-]{1,128}$' THEN
    RAISE EXCEPTION 'ferry.enqueue: name must match [A-Za-z0-9._:-]{1,128} (got %)', quote_nullable(name)
      USING ERRCODE = 'invalid_parameter_value';
  END IF;
  IF queue IS NULL OR queue !~ '^[A-Za-z0-9._:-]{1,128}$' THEN
    RAISE EXCEPTION 'ferry.enqueue: queue must match [A-Za-z0-9._:-]{1,128} (got %)', quote_nullable(queue)
      USING ERRCODE = 'invalid_parameter_value';
  END IF;
  IF payload IS NULL OR octet_length(payload::text) > 1048576 THEN
    RAISE EXCEPTION 'ferry.enqueue: payload must be JSON of at most 1 MiB'
      USING ERRCODE = 'invalid_parameter_value';
  END IF;
  IF priority IS NULL OR max_attempts IS NULL OR max_attempts < 1 OR max_attempts > 1000000 THEN
    RAISE EXCEPTION 'ferry.enqueue: priority is required and max_attempts must be from 1 to 1000000'
      USING ERRCODE = 'invalid_parameter_value';
  END IF;
  IF timeout_ms IS NOT NULL AND timeout_ms < 1 THEN
    RAISE EXCEPTION 'ferry.enqueue: timeout_ms must be a positive integer'
      USING ERRCODE = 'invalid_parameter_value';
  END IF;
  IF unique_key IS NOT NULL AND (unique_key = '' OR length(unique_key) > 255) THEN
    RAISE EXCEPTION 'ferry.enqueue: unique_key must have 1 to 255 characters'
      USING ERRCODE = 'invalid_parameter_value';
  END IF;
  SELECT e.id INTO job_id
  FROM :"schema".enqueue_batch(
    ARRAY[queue], ARRAY[name], ARRAY[payload::text], ARRAY[priority],
    ARRAY[floor(extract(epoch FROM run_at) * 1000)::bigint], ARRAY[0::bigint], ARRAY[max_attempts],
    ARRAY[timeout_ms], ARRAY[unique_key], NULL
  ) AS e;
  RETURN job_id;
END
$$;
