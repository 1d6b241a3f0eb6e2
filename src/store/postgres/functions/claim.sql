-- claim: scheduled jobs of the claimed queues whose time has come become ready, whatever their
-- name (they keep run_at, so they take their place among ready jobs), then the next ready jobs are
-- leased, queue by queue in the order given, each queue read in claim order. One call, so one round
-- trip for any number of queues. attempts counts the attempt now, so a worker that dies mid-job has
-- used it. Each job's lease token is the claim's base (drawn by the store, store/kernel/lease-tokens.ts)
-- and the job's id, so tokens are minted the same way in every store.
--
-- Locking: FOR UPDATE SKIP LOCKED sits under each queue's LIMIT, so concurrent claims pass over each
-- other's rows instead of waiting, and the outer LIMIT stops the nested loop as soon as it has
-- p_limit rows: no row beyond those taken is locked, and later queues are not even read (but for
-- the probe for grouped jobs below, one seek per queue). The nested loop reads the queues in
-- ordinality order, which is what makes the queue order strict.
--
-- With p_names (ClaimParams.names: workers with different handler sets share a queue), each
-- (queue, name) range of jobs_ready_by_name is read under FOR UPDATE SKIP LOCKED up to the limit
-- before the merge, so a job another claim has locked is replaced by the next of its name: a claim
-- may lock up to (names - 1) x limit rows of a queue that it does not take (only when several of
-- its names have that many ready jobs there), which other claims skip until it commits. Jobs of
-- other names, however many, are not read; a job of a name nobody asked for stays in line,
-- untouched. Measured (bench postgres-claim, 1,000,000 ready, 3 runs, 2026-12-02, a shared
-- machine): a claim of 1 of its name behind 100,000 ready jobs of another name took 0.82 ms p50
-- (0.58 ms with synchronous_commit off), against 0.83 ms (0.77 ms) for the claim without names,
-- which took 0.88 ms (0.81 ms) before names existed. Without p_names the statements are the ones
-- of the claim before names, so it keeps its plan on jobs_ready (which must not merge over every
-- name).
-- Queue control (migration 0012, Store.control): the settings of the claimed queues are read once
-- (one primary-key probe of the small queues table per queue), and give each queue of the list
-- the most it may give, `room`: 0 for a paused queue, the concurrency limit less the queue's live
-- leases for a limited one (and no more than its rate allows, below), NULL (no cap) for a queue
-- without a row. Each queue's LIMIT is least(p_limit, its room), so what one cannot give comes
-- from the next, in strict order. A claim of queues without a row takes no lock and reads nothing
-- more. A limited queue's row is locked
-- (FOR UPDATE, in queue order, so two claims cannot wait for each other) before its live leases are
-- counted, in a statement of its own that sees every claim committed before the lock was granted:
-- claims of one limited queue run one at a time, in every session, until their transaction ends,
-- and together never pass the limit. deliver() calls with p_delivered and may hold rows locked for
-- several waiters until its enqueue commits, so it takes them SKIP LOCKED and never waits (a queue
-- whose row another claim holds gives this delivery nothing; its jobs stay ready and its waiters
-- are woken). The live leases are counted over jobs_active (active jobs by lease expiry, as many
-- rows as jobs running, of every queue): no index of the queue's own, which every claim and settle
-- would maintain, for a count only limited queues need; bounded by the limit itself.
-- Start deadlines (migration 0013): the statement that promotes due jobs, before the pick, also
-- ends the claimed queues' jobs not started by their deadline as dead with cause 'expired'
-- (kernel EXPIRED_ERROR, whose JSON text is written here as JSON.stringify writes it), attempts
-- unchanged, whatever the queue's settings: a paused queue's too, as the recoverer's sweep would.
-- Read from jobs_deadline, which holds only unstarted jobs with a deadline: a schema where no job
-- has one pays one empty seek. At most 1,000 a call (as the SQLite store's claim; SKIP LOCKED, so
-- concurrent claims split them); the pick passes over any that are left, so none is ever handed
-- out, and the next claims or the sweep end them.
-- Rate limits (migration 0014: Store.control's rate and groupRate): a sliding-window log of starts
-- (the starts table). Each job a claim takes of a queue with a rate or a group rate (through
-- claim(), settle_and_claim() or a delivery: all of them are this function) logs a start at the
-- claim's instant; a start at s counts while at - s < perMs. The queue's rate caps its room
-- (`limit` less the starts it counts: the window's entries of starts_by_queue, at most `limit` of
-- them); a group's rate caps that group's turns. Logging, pruning and the wake hint that a
-- rate-held claim leaves for waiters are claim_rates()'s (claim-rates.sql), called only for a list
-- with such a queue. Every queue with any limit (concurrency, rate, groupConcurrency, groupRate)
-- is `limited`: its row is locked as above, so the claims of a queue with a rate run one at a time
-- and count exactly, in every session.
-- Groups (migration 0014): at most groupConcurrency live leases and groupRate starts per group of a
-- queue; jobs without a group are held only by the queue's limits. Fairness needs no setting: a
-- queue with grouped ready jobs (of p_names) gives its jobs round its groups, from the group after
-- the one it served last (the rotation: claim-rotation.sql, which also says what it costs). Its
-- cursor row is locked for the claim's transaction, so the claims of a queue with grouped ready
-- jobs run one at a time, in every session, as those of a limited queue do: the price of a
-- rotation that every worker follows.
-- Cost where no group or rate is concerned: whether the queues have grouped ready jobs is one
-- statement, a seek of jobs_grouped per queue (an empty one where there are none). A claim where
-- none has any runs the statement it ran before groups, on jobs_ready, which holds only the jobs
-- without a group since 0014. The rotation and the rates are functions of their own, and the
-- statements of a claim without them are those of the claim before (the probe aside), because
-- each statement costs every call more than it runs: a longer PL/pgSQL function, or a statement
-- made more complex, is planned anew on every call (custom plans; claims of 1 from 10,000 ready
-- jobs took 0.09 ms more without settings and 0.29 ms more with a concurrency limit, when the
-- probe listed the queues in the settings' statement and the room had the rate folded in).
-- What is left, measured (claims of 1 from 30,000 ready jobs without settings, 1,000-claim chunks
-- of each interleaved in one session, each committed, 3 runs, load 1.4, 2026-12-03): 0.790,
-- 0.738, 0.750 ms p50 before groups; 0.822, 0.781, 0.788 ms with them. Of those 0.03-0.04 ms,
-- 0.02-0.03 is jobs_grouped, one index more for every statement on jobs to plan and every update
-- to open (the claim before groups, on a schema with 0014's indexes, costs as much), and
-- 0.005-0.01 the probe.
-- The jobs without a group are read from jobs_ready (or jobs_ready_by_name) whatever grouped jobs
-- stand ahead of them. Had grouped jobs stayed in it as well, the turn of the jobs without a group
-- would read past every grouped job ahead: measured (EXPLAIN ANALYZE of that read, a queue of
-- 30,000 grouped ready jobs ahead of 100 without a group, 2026-12-03, a shared machine at load 8):
-- 3.5 ms warm (552 buffers, 30,000 rows removed by the filter) against 0.03 ms (3 buffers).
-- Lock order, which keeps claims from waiting on each other in a cycle: the queue rows first (one
-- statement, by name), then the cursor rows (made where missing, then locked, each by name, in
-- one statement each); nothing is waited for after that. deliver() (p_delivered) waits for
-- nothing: it takes cursor rows SKIP LOCKED, and a grouped queue whose cursor another claim holds
-- gives this delivery nothing (its jobs stay ready and its waiters are woken); one that has no
-- cursor row yet is served from the start of the rotation, and gets its row from the next claim
-- that is not a delivery (making it, the delivery could wait for another claim making it too,
-- while holding rows that claim will wait for).
-- Parameters: p_queues (strict order), p_limit, p_lease_ms, p_worker_id, p_now (ms or NULL for the
--             server's clock), p_token_base (the lease tokens' random base), p_delivered (deliver()
--             passes true: the jobs hold a delivery lease until their worker takes them), p_names
--             (only jobs of these names; NULL: every name).
-- Returns: the leased rows in claim order: queue order, then within a queue priority DESC, run_at,
--          id, or for a queue with grouped ready jobs the order of the rotation.
-- Relies on: jobs_deadline (the expired jobs), jobs_scheduled (promotion), jobs_ready or
--            jobs_ready_by_name (the pick), jobs_grouped (whether a queue has grouped ready jobs),
--            the primary key (the updates); FOR UPDATE SKIP LOCKED; the queues table's primary
--            key, jobs_active for a limited queue's live leases, starts_by_queue for its rate;
--            claim_rotation() and claim_rates().
-- Settings: jit = off, enable_seqscan = off (README.md).
CREATE OR REPLACE FUNCTION :"schema".claim(
  p_queues text[], p_limit integer, p_lease_ms bigint, p_worker_id text, p_now bigint, p_token_base text,
  p_delivered boolean DEFAULT false, p_names text[] DEFAULT NULL
) RETURNS SETOF :"schema".jobs
LANGUAGE plpgsql SET jit = off SET enable_seqscan = off
AS $$
#variable_conflict use_column
DECLARE
  at bigint := coalesce(p_now, :"schema".now_ms());
  picked_ids bigint[];
  -- Per picked job, its place in the returned order: its queue's position in p_queues (the
  -- statement's pick, which sorts each queue's jobs), or its place in the rotation.
  picked_ords bigint[];
  -- Per picked job, its queue's position in p_queues (the rotation's; the statement's are its ords).
  picked_qpos bigint[];
  paused text[];
  limited text[];
  -- Whether a queue of the list has grouped ready jobs of p_names.
  grouped boolean;
  -- The limited queues' rows as locked: their names, and their concurrency caps (0 if paused).
  locked_queues text[];
  locked_caps integer[];
  -- Per position of p_queues, the most that queue may give; NULL: no cap of its own.
  room integer[];
  -- The locked queues with a rate or a group rate: their claims log their starts.
  rated text[];
  -- Per position of p_queues, the starts its rate allows; NULL: no rate.
  rate_left integer[];
  -- The groups that their group rate held back, with their queue, pairwise.
  held_queues text[];
  held_groups text[];
BEGIN
  -- Due jobs of the queues become ready, whatever their name: they take their place in line for
  -- the workers that know them. = ANY(ARRAY(…)) looks the due ids up by primary key whatever the
  -- planner estimates: written as id IN (…), the generic plan (which guesses a third of the
  -- scheduled jobs due) hashed the due ids and joined them to a sequential scan of the whole
  -- table, which costs nothing while no job is due and the whole backlog as soon as one is
  -- (EXPLAIN at 1,000,000 jobs, bench postgres-claim).
  -- In the same statement, the queues' jobs past their start deadline (ready, or scheduled whether
  -- due or not) end, never run (a due one past its deadline also beyond the bound): not a
  -- statement of its own, which every claim would run. A claim of 1 (30,000 ready, 200-claim chunks
  -- of each variant interleaved in one DO block, each claim committed, load 3.5, 3 runs; medians):
  -- 1.25, 1.19, 1.22 ms before deadlines; 1.37, 1.38, 1.33 ms with a statement of its own; 1.33,
  -- 1.36, 1.27 ms so, where auto_explain shows the empty seek of jobs_deadline at 13 µs.
  UPDATE :"schema".jobs AS j
  SET state = CASE WHEN j.expires_at <= at THEN 'dead' ELSE 'ready' END,
      finished_at = CASE WHEN j.expires_at <= at THEN at END,
      last_error = CASE
                     WHEN j.expires_at <= at
                       THEN '{"kind":"expired","message":"its start deadline (expiresAt) passed before it could start"}'
                     ELSE j.last_error
                   END,
      -- A key that frees when its job finishes frees when it ends so (migration 0016).
      held_unique_key = CASE WHEN j.expires_at <= at AND j.unique_until IS NOT NULL THEN NULL
                             ELSE j.held_unique_key END,
      updated_at = at
  WHERE j.id = ANY (ARRAY(
    SELECT due.id
    FROM unnest(p_queues) AS q(name)
    CROSS JOIN LATERAL (
      SELECT s.id FROM :"schema".jobs AS s
      WHERE s.state = 'scheduled' AND s.queue = q.name AND s.run_at <= at
      FOR UPDATE SKIP LOCKED
    ) AS due
  ) || ARRAY(
    SELECT e.id FROM :"schema".jobs AS e
    WHERE e.expires_at <= at AND e.state IN ('ready', 'scheduled') AND e.queue = ANY (p_queues)
    ORDER BY e.expires_at
    LIMIT 1000
    FOR UPDATE SKIP LOCKED
  ));
  SELECT array_agg(s.queue) FILTER (WHERE s.paused_at IS NOT NULL),
         array_agg(s.queue) FILTER (WHERE s.paused_at IS NULL
                                      AND (s.concurrency IS NOT NULL OR s.rate_limit IS NOT NULL
                                           OR s.group_concurrency IS NOT NULL OR s.group_rate_limit IS NOT NULL))
  INTO paused, limited
  FROM :"schema".queues AS s
  WHERE s.queue = ANY (p_queues);
  -- Whether any queue of the list has grouped ready jobs (of p_names): a seek of jobs_grouped per
  -- queue, up to the first that has. A statement of its own, simple enough for a generic plan:
  -- folded into the one above, or listing the queues, it was planned anew on every call (+0.1 ms).
  grouped := EXISTS (SELECT 1 FROM :"schema".jobs AS g
                     WHERE g.state = 'ready' AND g.group_key IS NOT NULL AND g.queue = ANY (p_queues)
                       AND (p_names IS NULL OR g.name = ANY (p_names)));
  IF limited IS NOT NULL THEN
    -- The locked row is the latest: a change committed meanwhile (paused, limit changed or
    -- removed) is what counts.
    IF p_delivered THEN
      SELECT array_agg(l.queue), array_agg(l.cap), array_agg(l.queue) FILTER (WHERE l.rated)
      INTO locked_queues, locked_caps, rated
      FROM (SELECT s.queue, CASE WHEN s.paused_at IS NULL THEN s.concurrency ELSE 0 END AS cap,
                   s.paused_at IS NULL AND (s.rate_limit IS NOT NULL OR s.group_rate_limit IS NOT NULL) AS rated
            FROM :"schema".queues AS s WHERE s.queue = ANY (limited)
            ORDER BY s.queue FOR UPDATE SKIP LOCKED) AS l;
    ELSE
      SELECT array_agg(l.queue), array_agg(l.cap), array_agg(l.queue) FILTER (WHERE l.rated)
      INTO locked_queues, locked_caps, rated
      FROM (SELECT s.queue, CASE WHEN s.paused_at IS NULL THEN s.concurrency ELSE 0 END AS cap,
                   s.paused_at IS NULL AND (s.rate_limit IS NOT NULL OR s.group_rate_limit IS NOT NULL) AS rated
            FROM :"schema".queues AS s WHERE s.queue = ANY (limited)
            ORDER BY s.queue FOR UPDATE) AS l;
    END IF;
  END IF;
  IF paused IS NOT NULL OR limited IS NOT NULL THEN
    -- A statement of its own, after the lock: its snapshot holds the leases of every claim that
    -- held the row before.
    room := ARRAY(
      SELECT CASE
               WHEN q.name = ANY (paused) THEN 0
               -- Limited by a rate or by group limits only.
               WHEN c.queue IS NOT NULL AND c.cap IS NULL THEN NULL
               WHEN c.queue IS NOT NULL THEN greatest(c.cap - (
                 SELECT count(*) FROM (
                   SELECT 1 FROM :"schema".jobs AS j
                   WHERE j.state = 'active' AND j.lease_expires_at > at AND j.queue = c.queue
                   LIMIT c.cap
                 ) AS live
               ), 0)
               -- Skipped by a delivery (another claim holds it): nothing this time.
               WHEN q.name = ANY (limited) THEN 0
             END
      FROM unnest(p_queues) WITH ORDINALITY AS q(name, ord)
      LEFT JOIN unnest(locked_queues, locked_caps) AS c(queue, cap) ON c.queue = q.name
      ORDER BY q.ord
    );
  END IF;
  IF cardinality(rated) > 0 THEN
    -- What the queues' own rates allow: `limit` less the starts their window counts (read from
    -- starts_by_queue, at most `limit` of them); no more than that is their room.
    rate_left := ARRAY(
      SELECT CASE WHEN s.rate_limit IS NOT NULL THEN greatest(s.rate_limit - (
               SELECT count(*) FROM (
                 SELECT 1 FROM :"schema".starts AS st
                 WHERE st.queue = s.queue AND st.started_at > at - s.rate_per_ms
                 LIMIT s.rate_limit
               ) AS counted
             ), 0) END
      FROM unnest(p_queues) WITH ORDINALITY AS q(name, ord)
      LEFT JOIN :"schema".queues AS s ON s.queue = q.name AND s.queue = ANY (rated)
      ORDER BY q.ord
    );
    room := ARRAY(SELECT least(r.room, r.lft) FROM unnest(room, rate_left) WITH ORDINALITY AS r(room, lft, ord)
                  ORDER BY r.ord);
  END IF;
  IF NOT grouped THEN
    -- No grouped job to share out: the jobs without a group, as before groups.
    IF p_names IS NULL THEN
      SELECT array_agg(p.id), array_agg(p.ord) INTO picked_ids, picked_ords
      FROM (
        SELECT c.id, q.ord
        FROM unnest(p_queues) WITH ORDINALITY AS q(name, ord)
        CROSS JOIN LATERAL (
          SELECT r.id FROM :"schema".jobs AS r
          WHERE r.state = 'ready' AND r.group_key IS NULL AND r.queue = q.name
            AND (r.expires_at IS NULL OR r.expires_at > at)
          ORDER BY r.priority DESC, r.run_at, r.id
          LIMIT least(p_limit, room[q.ord])
          FOR UPDATE SKIP LOCKED
        ) AS c
        LIMIT p_limit
      ) AS p;
    ELSE
      -- The same, but each queue's next jobs are the first of each name (jobs_ready_by_name),
      -- merged in claim order.
      SELECT array_agg(p.id), array_agg(p.ord) INTO picked_ids, picked_ords
      FROM (
        SELECT c.id, q.ord
        FROM unnest(p_queues) WITH ORDINALITY AS q(name, ord)
        CROSS JOIN LATERAL (
          SELECT m.id
          FROM unnest(p_names) AS n(name)
          CROSS JOIN LATERAL (
            SELECT r.id, r.priority, r.run_at FROM :"schema".jobs AS r
            WHERE r.state = 'ready' AND r.group_key IS NULL AND r.queue = q.name AND r.name = n.name
              AND (r.expires_at IS NULL OR r.expires_at > at)
            ORDER BY r.priority DESC, r.run_at, r.id
            LIMIT least(p_limit, room[q.ord])
            FOR UPDATE SKIP LOCKED
          ) AS m
          ORDER BY m.priority DESC, m.run_at, m.id
          LIMIT least(p_limit, room[q.ord])
        ) AS c
        LIMIT p_limit
      ) AS p;
    END IF;
  ELSE
    SELECT r.picked_ids, r.picked_ords, r.picked_qpos, r.held_queues, r.held_groups
    INTO picked_ids, picked_ords, picked_qpos, held_queues, held_groups
    FROM :"schema".claim_rotation(p_queues, p_limit, p_names, at, p_delivered, room, locked_queues) AS r;
  END IF;
  IF cardinality(picked_ids) > 0 THEN
    -- The picked rows are locked by this transaction now; = ANY(picked_ids) reaches them by
    -- primary key whatever the join is estimated at.
    RETURN QUERY
    WITH leased AS (
      UPDATE :"schema".jobs AS j
      SET state = 'active', attempts = j.attempts + 1, lease_token = p_token_base || '.' || j.id,
          lease_expires_at = at + p_lease_ms, worker_id = p_worker_id, updated_at = at, delivered = p_delivered,
          -- A key that frees when its job starts frees here (migration 0016).
          held_unique_key = CASE WHEN j.unique_until = 'started' THEN NULL ELSE j.held_unique_key END
      FROM unnest(picked_ids, picked_ords) AS picked(id, ord)
      WHERE j.id = picked.id AND j.id = ANY (picked_ids)
      RETURNING j.*, picked.ord
    )
    SELECT l.id, l.queue, l.name, l.payload, l.state, l.priority, l.run_at, l.attempts, l.max_attempts,
           l.timeout_ms, l.unique_key, l.lease_token, l.lease_expires_at, l.worker_id, l.last_error, l.result,
           l.created_at, l.updated_at, l.finished_at, l.delivered, l.group_key, l.expires_at, l.meta,
           l.held_unique_key, l.unique_until, l.unique_expires_at, l.keep_for_ms, l.progress, l.logs
    FROM leased AS l
    ORDER BY l.ord, l.priority DESC, l.run_at, l.id;
  END IF;
  -- Nothing more for a claim of queues without a rate (nearly every claim).
  IF cardinality(rated) > 0 THEN
    PERFORM :"schema".claim_rates(p_queues, at, rated, rate_left, picked_ids, coalesce(picked_qpos, picked_ords),
                                  held_queues, held_groups);
  END IF;
END
$$;
