-- wait_for_work: what a waiting worker needs to know when it starts listening, after its listening
-- connection came back, and at each safety-net check: which of its queues have ready work of its
-- names (it may have missed their notifications; jobs it would not claim do not wake it), the
-- earliest run time of their scheduled jobs (for the 'due' timer), with the server's clock to
-- translate that time to this host's, and the time of the last stop request. With a waiter id, it
-- also registers the waiter for delivery (deliver()) unless it is to wake at once (ready or due
-- work): looked at and registered in one snapshot, after its store's LISTEN, so a job committed
-- after the snapshot is either delivered to it or notified to it. Writes nothing without a waiter
-- id, and with one only to the UNLOGGED waiters table (no WAL flush at commit).
-- A queue that is paused, at its concurrency limit (as many live leases as the limit allows), or
-- whose rate's window is full (as many starts as the limit allows) counts as having neither ready
-- nor due work: its jobs are not the waiter's to claim, and would wake it again and again. So does
-- a ready job of a group at its group concurrency limit or its group rate: a queue with group
-- limits has ready work when a job without a group is ready, or a group with ready jobs has room,
-- found walking its groups in order (one seek each) until one has. It is woken when that changes:
-- a resume or a limit change (control-queue-write.sql), a settled, recovered or cancelled job of a
-- queue with a concurrency or group concurrency limit (settle(), recover_expired(), cancel.sql)
-- notify the queue as an enqueue does; a window full of starts lets one start again at a time
-- known now, which the due timer takes: the earliest of those windows' opening (the limit-th
-- newest start it counts + perMs) and of the wake hints that claims held back by a rate left on
-- their queues' rows (rate_opens_at; one already past means nothing, so it never wakes a waiter
-- at once). Computed here as well as hinted: a claim that filled a window without leaving a job
-- behind wrote no hint, and this look is what a waiter of another worker arms its timer with.
-- Parameters: p_queues, p_waiter_id (NULL: look only), p_limit, p_lease_ms, p_worker_id,
--             p_channel, p_lock_key (the waiter's delivery and liveness), p_names (NULL: every name).
-- Returns: ready (queues with ready work), next_run_at (the due timer), server_now, stop_at,
--          registered.
-- Relies on: jobs_ready (or jobs_ready_by_name, a seek per queue and name) and jobs_grouped (the
--            names filtered there): a seek or two per queue,
--            jobs_scheduled (one seek per queue), the control table; the queues table's primary
--            key, jobs_active for a limited queue's live leases (as claim()), and for a queue with
--            rates or group limits starts_by_queue, starts_by_group, jobs_grouped and
--            group_live_leases().
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
  -- The queues whose jobs the waiter may claim now, as far as the queue's own limits go.
  claimable text[];
  -- The claimable queues with group limits: their ready jobs count group by group.
  group_limited :"schema".queues[];
  gq :"schema".queues;
  k text;
  opens bigint;
  window_opens bigint;
  has_room boolean;
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
        ) OR s.rate_limit <= (
          SELECT count(*) FROM (
            SELECT 1 FROM :"schema".starts AS st
            WHERE st.queue = s.queue AND st.started_at > server_now - s.rate_per_ms
            LIMIT s.rate_limit
          ) AS counted
        ))
    )
    ORDER BY q.ord
  );
  SELECT array_agg(s) INTO group_limited
  FROM :"schema".queues AS s
  WHERE s.queue = ANY (claimable) AND (s.group_concurrency IS NOT NULL OR s.group_rate_limit IS NOT NULL);
  -- Either half of the ready jobs, with or without a group; in a queue with group limits, only
  -- the jobs without a group (the groups are looked at below).
  IF p_names IS NULL THEN
    ready := ARRAY(
      SELECT q.name FROM unnest(claimable) AS q(name)
      WHERE EXISTS (SELECT 1 FROM :"schema".jobs AS j
                    WHERE j.state = 'ready' AND j.group_key IS NULL AND j.queue = q.name)
         OR (NOT EXISTS (SELECT 1 FROM unnest(group_limited) AS g WHERE g.queue = q.name)
             AND EXISTS (SELECT 1 FROM :"schema".jobs AS j
                         WHERE j.state = 'ready' AND j.group_key IS NOT NULL AND j.queue = q.name))
    );
  ELSE
    ready := ARRAY(
      SELECT q.name FROM unnest(claimable) AS q(name)
      WHERE EXISTS (
        SELECT 1 FROM unnest(p_names) AS n(name)
        WHERE EXISTS (
          SELECT 1 FROM :"schema".jobs AS j
          WHERE j.state = 'ready' AND j.group_key IS NULL AND j.queue = q.name AND j.name = n.name
        )
      ) OR (NOT EXISTS (SELECT 1 FROM unnest(group_limited) AS g WHERE g.queue = q.name)
            AND EXISTS (SELECT 1 FROM :"schema".jobs AS j
                        WHERE j.state = 'ready' AND j.group_key IS NOT NULL AND j.queue = q.name
                          AND j.name = ANY (p_names)))
    );
  END IF;
  -- The groups of the queues with group limits, in order, until one has room; a group whose rate
  -- holds it tells when it lets a start again.
  FOR gq IN SELECT * FROM unnest(group_limited) LOOP
    CONTINUE WHEN gq.queue = ANY (ready);
    k := '';
    LOOP
      k := (SELECT g.group_key FROM :"schema".jobs AS g
            WHERE g.state = 'ready' AND g.group_key IS NOT NULL AND g.queue = gq.queue AND g.group_key > k
              AND (p_names IS NULL OR g.name = ANY (p_names))
            ORDER BY g.group_key
            LIMIT 1);
      EXIT WHEN k IS NULL;
      has_room := gq.group_concurrency IS NULL
                  OR gq.group_concurrency > :"schema".group_live_leases(gq.queue, k, server_now, gq.group_concurrency);
      IF has_room AND gq.group_rate_limit IS NOT NULL THEN
        window_opens := (
          SELECT st.started_at + gq.group_rate_per_ms FROM :"schema".starts AS st
          WHERE st.queue = gq.queue AND st.group_key = k AND st.started_at > server_now - gq.group_rate_per_ms
          ORDER BY st.started_at DESC
          OFFSET gq.group_rate_limit - 1
          LIMIT 1
        );
        has_room := window_opens IS NULL;
        opens := least(opens, window_opens);
      END IF;
      IF has_room THEN
        ready := ready || gq.queue;
        EXIT;
      END IF;
    END LOOP;
  END LOOP;
  SELECT min(n.run_at) INTO next_run_at
  FROM unnest(claimable) AS q(name)
  CROSS JOIN LATERAL (
    SELECT j.run_at FROM :"schema".jobs AS j WHERE j.state = 'scheduled' AND j.queue = q.name
    ORDER BY j.run_at LIMIT 1
  ) AS n;
  -- The queues' own windows that are full, and the claims' hints still to come.
  SELECT least(min(w.opens), min(s.rate_opens_at) FILTER (WHERE s.rate_opens_at > server_now)) INTO window_opens
  FROM :"schema".queues AS s
  LEFT JOIN LATERAL (
    SELECT st.started_at + s.rate_per_ms AS opens FROM :"schema".starts AS st
    WHERE s.rate_limit IS NOT NULL AND st.queue = s.queue AND st.started_at > server_now - s.rate_per_ms
    ORDER BY st.started_at DESC
    OFFSET s.rate_limit - 1
    LIMIT 1
  ) AS w ON true
  WHERE s.queue = ANY (p_queues) AND s.paused_at IS NULL
    AND (s.rate_limit IS NOT NULL OR s.group_rate_limit IS NOT NULL);
  next_run_at := least(next_run_at, opens, window_opens);
  SELECT c.at INTO stop_at FROM :"schema".control AS c WHERE c.key = 'stop';
  registered := false;
  IF p_waiter_id IS NOT NULL AND cardinality(ready) = 0 AND (next_run_at IS NULL OR next_run_at > server_now) THEN
    INSERT INTO :"schema".waiters (id, queues, names, lim, lease_ms, worker_id, channel, lock_key, registered_at)
    VALUES (p_waiter_id, p_queues, p_names, p_limit, p_lease_ms, p_worker_id, p_channel, p_lock_key, server_now);
    registered := true;
  END IF;
END
$$;
