-- Claims that take only the job names a worker has handlers for (ClaimParams.names), so workers
-- with different handler sets can share a queue: a rolling deploy that adds a job type no longer
-- fails the new jobs on the workers that do not know it yet, attempt after attempt. A job of a name
-- no waiter asked for stays in line, untouched, for a worker that knows it.
--
-- Flat whatever stands ahead: the filter reads one index range per (queue, name) asked for,
-- already in claim order, and merges their first rows; jobs of other names, however many, are not
-- read. jobs_ready stays for the claim without a filter, which must not merge over every name.
-- Measured (bench postgres-claim, 1,000,000 ready, 3 runs, 2026-12-02, a shared machine): a claim
-- of 1 of its name behind 100,000 ready jobs of another name took 0.82 ms p50 (0.58 ms with
-- synchronous_commit off), against 0.83 ms (0.77 ms) for the claim without names, which took
-- 0.88 ms (0.81 ms) before this migration.

CREATE INDEX jobs_ready_by_name ON :"schema".jobs (queue, name, priority DESC, run_at, id) WHERE state = 'ready';

-- The names a waiting worker claims (NULL: every name), for the claims deliver() makes for it.
ALTER TABLE :"schema".waiters ADD COLUMN names text[];

-- claim as in 0005_leases_across_clock_steps.sql, with p_names. Without it the statements are the
-- same as before, so the claim without a filter keeps its plan. With it, each (queue, name) range
-- is read under FOR UPDATE SKIP LOCKED up to the limit before the merge, so a job another claim has
-- locked is replaced by the next of its name: a claim may lock up to (names - 1) x limit rows of a
-- queue that it does not take (only when several of its names have that many ready jobs there),
-- which other claims skip until it commits.
DROP FUNCTION :"schema".claim(text[], integer, bigint, text, bigint, boolean);

CREATE FUNCTION :"schema".claim(
  p_queues text[], p_limit integer, p_lease_ms bigint, p_worker_id text, p_now bigint,
  p_delivered boolean DEFAULT false, p_names text[] DEFAULT NULL
) RETURNS SETOF :"schema".jobs
LANGUAGE plpgsql
SET jit = off
SET enable_seqscan = off
AS $$
#variable_conflict use_column
DECLARE
  at bigint := coalesce(p_now, :"schema".now_ms());
BEGIN
  -- Due jobs of the queues become ready, whatever their name: they take their place in line for
  -- the workers that know them (0005: why = ANY(ARRAY(…))).
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
  IF p_names IS NULL THEN
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
  ELSE
    -- The same, but each queue's next jobs are the first of each name (jobs_ready_by_name),
    -- merged in claim order.
    RETURN QUERY
    WITH picked AS (
      SELECT c.id, q.ord
      FROM unnest(p_queues) WITH ORDINALITY AS q(name, ord)
      CROSS JOIN LATERAL (
        SELECT m.id
        FROM unnest(p_names) AS n(name)
        CROSS JOIN LATERAL (
          SELECT r.id, r.priority, r.run_at FROM :"schema".jobs AS r
          WHERE r.state = 'ready' AND r.queue = q.name AND r.name = n.name
          ORDER BY r.priority DESC, r.run_at, r.id
          LIMIT p_limit
          FOR UPDATE SKIP LOCKED
        ) AS m
        ORDER BY m.priority DESC, m.run_at, m.id
        LIMIT p_limit
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
  END IF;
END
$$;

-- settle_and_claim as in 0006_rows_locked_elsewhere.sql, with the claim's p_names. Every p_names
-- defaults to NULL, so a process of the Ferry before this one, still running while its
-- replacements migrate, keeps calling these functions as it did, and claims every name.
DROP FUNCTION :"schema".settle_and_claim(bigint[], text[], text[], bigint[], text[], text[], text[], integer, bigint,
                                         text, bigint);

CREATE FUNCTION :"schema".settle_and_claim(
  p_id bigint[], p_lease_token text[], p_kind text[], p_run_at bigint[], p_error text[], p_result text[],
  p_queues text[], p_limit integer, p_lease_ms bigint, p_worker_id text, p_now bigint,
  p_names text[] DEFAULT NULL
) RETURNS TABLE (lost integer[], locked integer[], job :"schema".jobs)
LANGUAGE plpgsql
SET jit = off
SET lock_timeout = '5s'
SET enable_seqscan = off
AS $$
#variable_conflict use_column
DECLARE
  lost_items integer[];
  locked_items integer[];
BEGIN
  SELECT s.lost, s.locked INTO lost_items, locked_items
  FROM :"schema".settle(p_id, p_lease_token, p_kind, p_run_at, p_error, p_result, p_now) AS s;
  RETURN QUERY SELECT lost_items, locked_items, c
               FROM :"schema".claim(p_queues, p_limit, p_lease_ms, p_worker_id, p_now, false, p_names) AS c;
  IF NOT FOUND THEN
    RETURN QUERY SELECT lost_items, locked_items, NULL:::"schema".jobs;
  END IF;
END
$$;

-- deliver as in 0005_leases_across_clock_steps.sql, claiming only the names each waiter asked for.
-- A waiter none of whose names is among the new jobs claims nothing and keeps waiting.
CREATE OR REPLACE FUNCTION :"schema".deliver(p_ready_queues text[], p_ready_count integer, p_at bigint) RETURNS text[]
LANGUAGE plpgsql
SET jit = off
SET enable_seqscan = off
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
      FROM :"schema".claim(w.queues, least(w.lim, 256), least(w.lease_ms, 2000), w.worker_id, p_at, true, w.names)
           WITH ORDINALITY AS c;
      -- Claimed nothing (earlier waiters took it all, or none is of its names): it keeps waiting.
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

-- wait_for_work as in 0007_plans_for_a_growing_table.sql, with p_names: only ready jobs of these
-- names count as work waiting (one seek of jobs_ready_by_name per queue and name), so a worker is
-- not woken at once, wait after wait, by jobs it would not claim; the waiter is registered with
-- them for deliver().
DROP FUNCTION :"schema".wait_for_work(text[], text, integer, bigint, text, text, bigint);

CREATE FUNCTION :"schema".wait_for_work(
  p_queues text[], p_waiter_id text, p_limit integer, p_lease_ms bigint, p_worker_id text, p_channel text,
  p_lock_key bigint, p_names text[] DEFAULT NULL, OUT ready text[], OUT next_run_at bigint, OUT server_now bigint,
  OUT stop_at bigint, OUT registered boolean
)
LANGUAGE plpgsql
SET jit = off
SET enable_seqscan = off
AS $$
#variable_conflict use_column
BEGIN
  IF p_names IS NULL THEN
    ready := ARRAY(
      SELECT q.name FROM unnest(p_queues) AS q(name)
      WHERE EXISTS (SELECT 1 FROM :"schema".jobs AS j WHERE j.state = 'ready' AND j.queue = q.name)
    );
  ELSE
    ready := ARRAY(
      SELECT q.name FROM unnest(p_queues) AS q(name)
      WHERE EXISTS (
        SELECT 1 FROM unnest(p_names) AS n(name)
        WHERE EXISTS (
          SELECT 1 FROM :"schema".jobs AS j WHERE j.state = 'ready' AND j.queue = q.name AND j.name = n.name
        )
      )
    );
  END IF;
  SELECT min(n.run_at) INTO next_run_at
  FROM unnest(p_queues) AS q(name)
  CROSS JOIN LATERAL (
    SELECT j.run_at FROM :"schema".jobs AS j WHERE j.state = 'scheduled' AND j.queue = q.name
    ORDER BY j.run_at LIMIT 1
  ) AS n;
  server_now := :"schema".now_ms();
  SELECT c.at INTO stop_at FROM :"schema".control AS c WHERE c.key = 'stop';
  registered := false;
  IF p_waiter_id IS NOT NULL AND cardinality(ready) = 0 AND (next_run_at IS NULL OR next_run_at > server_now) THEN
    INSERT INTO :"schema".waiters (id, queues, names, lim, lease_ms, worker_id, channel, lock_key, registered_at)
    VALUES (p_waiter_id, p_queues, p_names, p_limit, p_lease_ms, p_worker_id, p_channel, p_lock_key, server_now);
    registered := true;
  END IF;
END
$$;
