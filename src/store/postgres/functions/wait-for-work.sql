-- wait_for_work: what a waiting worker needs to know when it starts listening, after its listening
-- connection came back, and at each safety-net check: which of its queues have ready work of its
-- names (it may have missed their notifications; jobs it would not claim do not wake it), the
-- earliest run time of their scheduled jobs (for the 'due' timer), with the server's clock to
-- translate that time to this host's, and the time of the last stop request. With a waiter id, it
-- also registers the waiter for delivery (deliver()) unless it is to wake at once (ready or due
-- work): looked at and registered in one snapshot, after its store's LISTEN, so a job committed
-- after the snapshot is either delivered to it or notified to it. Writes nothing without a waiter
-- id, and with one only to the UNLOGGED waiters table (no WAL flush at commit).
-- A queue that is paused, or at its concurrency limit (as many live leases as the limit allows),
-- counts as having neither ready nor due work: its jobs are not the waiter's to claim, and would
-- wake it again and again. It is woken when that changes: a resume or a limit change
-- (control-queue-write.sql), a settled, recovered or cancelled job of a limited queue (settle(),
-- recover_expired(), cancel.sql) notify the queue as an enqueue does.
-- Parameters: p_queues, p_waiter_id (NULL: look only), p_limit, p_lease_ms, p_worker_id,
--             p_channel, p_lock_key (the waiter's delivery and liveness), p_names (NULL: every name).
-- Returns: ready (queues with ready work), next_run_at, server_now, stop_at, registered.
-- Relies on: jobs_ready or jobs_ready_by_name (one seek per queue, or per queue and name),
--            jobs_scheduled (one seek per queue), the control table; the queues table's primary
--            key, and jobs_active for a limited queue's live leases (as claim()).
-- Settings: jit = off, enable_seqscan = off (README.md).
CREATE OR REPLACE FUNCTION :"schema".wait_for_work(
  p_queues text[], p_waiter_id text, p_limit integer, p_lease_ms bigint, p_worker_id text, p_channel text,
  p_lock_key bigint, p_names text[] DEFAULT NULL, OUT ready text[], OUT next_run_at bigint, OUT server_now bigint,
  OUT stop_at bigint, OUT registered boolean
)
LANGUAGE plpgsql SET jit = off SET enable_seqscan = off
AS $$
#variable_conflict use_column
DECLARE
  -- The queues whose jobs the waiter may claim now.
  claimable text[];
BEGIN
  server_now := :"schema".now_ms();
  claimable := ARRAY(
    SELECT q.name FROM unnest(p_queues) WITH ORDINALITY AS q(name, ord)
    WHERE NOT EXISTS (
      SELECT 1 FROM :"schema".queues AS s
      WHERE s.queue = q.name
        AND (s.paused_at IS NOT NULL OR s.concurrency <= (
          SELECT count(*) FROM (
            SELECT 1 FROM :"schema".jobs AS j
            WHERE j.state = 'active' AND j.lease_expires_at > server_now AND j.queue = s.queue
            LIMIT s.concurrency
          ) AS live
        ))
    )
    ORDER BY q.ord
  );
  IF p_names IS NULL THEN
    ready := ARRAY(
      SELECT q.name FROM unnest(claimable) AS q(name)
      WHERE EXISTS (SELECT 1 FROM :"schema".jobs AS j WHERE j.state = 'ready' AND j.queue = q.name)
    );
  ELSE
    ready := ARRAY(
      SELECT q.name FROM unnest(claimable) AS q(name)
      WHERE EXISTS (
        SELECT 1 FROM unnest(p_names) AS n(name)
        WHERE EXISTS (
          SELECT 1 FROM :"schema".jobs AS j WHERE j.state = 'ready' AND j.queue = q.name AND j.name = n.name
        )
      )
    );
  END IF;
  SELECT min(n.run_at) INTO next_run_at
  FROM unnest(claimable) AS q(name)
  CROSS JOIN LATERAL (
    SELECT j.run_at FROM :"schema".jobs AS j WHERE j.state = 'scheduled' AND j.queue = q.name
    ORDER BY j.run_at LIMIT 1
  ) AS n;
  SELECT c.at INTO stop_at FROM :"schema".control AS c WHERE c.key = 'stop';
  registered := false;
  IF p_waiter_id IS NOT NULL AND cardinality(ready) = 0 AND (next_run_at IS NULL OR next_run_at > server_now) THEN
    INSERT INTO :"schema".waiters (id, queues, names, lim, lease_ms, worker_id, channel, lock_key, registered_at)
    VALUES (p_waiter_id, p_queues, p_names, p_limit, p_lease_ms, p_worker_id, p_channel, p_lock_key, server_now);
    registered := true;
  END IF;
END
$$;
