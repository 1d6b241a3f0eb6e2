-- deliver: hands the jobs just made ready to waiters of their queues, first registered first.
-- Each waiter is locked as it is looked at, one at a time (FOR UPDATE SKIP LOCKED, LIMIT 1: a
-- cursor would lock the rows it prefetches, and a concurrent enqueue would pass over waiters this
-- one never serves). A dead waiter is deleted; a live one gets claim() with its queues, names,
-- limit and worker id, at p_at (the enqueue's instant), and a delivery lease of at most 2,000 ms
-- (DELIVERY_LEASE_MS in src/store/store.ts; the waiter's own lease if shorter), so a waiter that
-- froze with a delivery in its socket buffer costs the job little; the jobs are marked delivered
-- until their worker takes them (renew() with p_delivered). If that claimed anything, the waiter's row is
-- deleted (a waiter is handed jobs once) and the rows are sent on its channel as
--   {"w": waiter id, "jobs": [[id, queue, name, payload, state, priority, run_at, attempts,
--     max_attempts, timeout_ms, unique_key, lease_token, lease_expires_at, worker_id, last_error,
--     result, created_at, updated_at, finished_at, group_key, expires_at, meta, progress, logs], …]}   (bigint
--     columns as text)
-- or, when that would pass NOTIFY's 8000 bytes, {"w": waiter id, "ids": ["id", …]}, which the
-- waiter's store reads (the jobs are leased to it already). At most 256 jobs per delivery, so the
-- ids always fit; what is left stays ready and its waiters are woken as usual. A waiter none of
-- whose names is among the new jobs claims nothing and keeps waiting. Queue control holds here as
-- in any claim (claim() decides): a paused queue gives a waiter nothing, a limited one no more than
-- its limits leave room for (its rates too: a delivery is a start), groups take their turns, and a
-- limited queue whose row another claim holds locked, or a grouped one whose turn row it holds,
-- gives this delivery nothing (claim() with p_delivered takes them SKIP LOCKED, since this
-- transaction may hold other queues' rows until the enqueue commits); what is left stays ready,
-- and its queue is woken.
-- Liveness, without timeouts: the listening connection of each store holds a session-level
-- advisory lock on its waiters' lock_key for as long as it lives. A key whose lock can be taken in
-- shared mode (pg_try_advisory_xact_lock_shared succeeds) tells that the connection is gone, the
-- waiter with it.
-- Bounded: it looks at no more than p_ready_count + 16 waiters (one job each at least, and a few
-- dead ones), and stops as soon as no ready job is left on the queues of the batch.
-- Parameters: p_ready_queues (the batch's queues with ready jobs), p_ready_count (its ready jobs),
--             p_at (the enqueue's instant, ms), p_token_base (the lease tokens' random base).
-- Returns: the queues of p_ready_queues that still have a ready job: those to wake (wake()).
-- Relies on: waiters in registration order, FOR UPDATE SKIP LOCKED; claim(); jobs_ready and
--            jobs_grouped (a seek or two per queue for what is left); advisory locks (liveness).
-- Settings: jit = off, enable_seqscan = off (README.md).
CREATE OR REPLACE FUNCTION :"schema".deliver(
  p_ready_queues text[], p_ready_count integer, p_at bigint, p_token_base text
) RETURNS text[]
LANGUAGE plpgsql SET jit = off SET enable_seqscan = off
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
                                       c.result, c.created_at::text, c.updated_at::text, c.finished_at::text,
                                       c.group_key, c.expires_at::text, c.meta, c.progress, c.logs)
                      ORDER BY c.ordinality),
             json_agg(c.id::text ORDER BY c.ordinality),
             count(*)
      INTO job_rows, job_ids, claimed
      FROM :"schema".claim(w.queues, least(w.lim, 256), least(w.lease_ms, 2000), w.worker_id, p_at, p_token_base,
                            true, w.names)
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
        -- jobs_ready, then jobs_grouped: a seek or two per queue.
        remaining := ARRAY(
          SELECT q.name FROM unnest(remaining) AS q(name)
          WHERE EXISTS (SELECT 1 FROM :"schema".jobs AS j
                        WHERE j.state = 'ready' AND j.group_key IS NULL AND j.queue = q.name)
             OR EXISTS (SELECT 1 FROM :"schema".jobs AS j
                        WHERE j.state = 'ready' AND j.group_key IS NOT NULL AND j.queue = q.name)
        );
        EXIT WHEN cardinality(remaining) = 0 OR served >= p_ready_count;
      END IF;
    END IF;
    EXIT WHEN looked >= p_ready_count + 16;
  END LOOP;
  RETURN remaining;
END
$$;
