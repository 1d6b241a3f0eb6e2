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
-- without a row. Each queue's LIMIT is
-- least(p_limit, its room), so what one cannot give comes from the next, in strict order. A claim
-- of queues without a row takes no lock and reads nothing more. A limited queue's row is locked
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
-- claim's instant, with its group ('' for none); a start at s counts while at - s < perMs. The
-- queue's rate caps its room (`limit` less the starts it counts: the window's entries of
-- starts_by_queue, at most `limit` of them); a group's rate caps that group's turns. The same claim prunes the queue's log
-- of what its longest window no longer counts. When a rate leaves a ready job behind (the window
-- is full after the claim, and a job of the queue, or of that group, is still ready), the claim
-- writes the queue's row rate_opens_at, the earliest time one of those windows lets a start again
-- (the limit-th newest start it counts + perMs), keeping an earlier one still to come: waiters arm
-- their due timer with it (wait_for_work). Every queue with any limit (concurrency, rate,
-- groupConcurrency, groupRate) is `limited`: its row is locked as above, so the claims of a queue
-- with a rate run one at a time and count exactly, in every session.
-- Groups (migration 0014): at most groupConcurrency live leases (jobs_active_grouped: one seek per
-- group, bounded by the limit) and groupRate starts per group of a queue; jobs without a group are
-- held only by the queue's limits. Fairness needs no setting: a queue with grouped ready jobs (of
-- p_names) gives its jobs round its groups. Rotation order: the jobs without a group first, as one
-- pseudo-group ''; then the groups in byte order (the column's collation is "C"). Each queue keeps
-- the group it last served (group_turns); each job of a claim comes from the next group after it,
-- cyclically, that has a ready job and room under the group limits, the group's first in claim
-- order (priority DESC, run_at, id); a full round of groups without a take ends the queue's share,
-- and the claim goes on to the next queue of the list. The group last served is written back.
-- The cursor row of a queue is locked for the claim's transaction, so the claims of a queue with
-- grouped ready jobs run one at a time, in every session, as those of a limited queue do: the price
-- of a rotation that every worker follows. A queue whose ready jobs have no group never gets a row.
-- Cost: whether a queue has grouped ready jobs is one probe of jobs_ready_grouped (an empty seek
-- where there are none), for every queue of the list that has room. A claim where none has any
-- runs the two statements it ran before (the pick below the `grouped` check, on jobs_ready, which
-- holds only the jobs without a group since 0014). Otherwise each queue of the list is read in
-- turn, and each job of a grouped queue costs a few seeks (the next group: jobs_ready_grouped; its
-- room; its first job). The turn of the jobs without a group reads jobs_ready, where no grouped
-- job stands ahead of them (migration 0014). Had grouped jobs stayed in it as well, that turn would
-- read past every grouped job ahead: measured (EXPLAIN ANALYZE of that read, a queue of 30,000
-- grouped ready jobs ahead of 100 without a group, 2026-12-03, a shared machine at load 8): 3.5 ms
-- warm (552 buffers, 30,000 rows removed by the filter) against 0.03 ms (3 buffers).
-- Lock order, which keeps claims from waiting on each other in a cycle: the queue rows first (one
-- statement, by name), then the cursor rows (inserted where missing, then locked, each by name,
-- in one statement each); nothing is waited for after that. deliver() (p_delivered) waits for
-- nothing: it takes cursor rows SKIP LOCKED, and a grouped queue whose cursor another claim holds
-- gives this delivery nothing (its jobs stay ready and its waiters are woken); one that has no
-- cursor row yet is served from the start of the rotation, and gets its row from the next claim
-- that is not a delivery (inserting it, the delivery could wait for another claim inserting it too,
-- while holding rows that claim will wait for).
-- Parameters: p_queues (strict order), p_limit, p_lease_ms, p_worker_id, p_now (ms or NULL for the
--             server's clock), p_token_base (the lease tokens' random base), p_delivered (deliver()
--             passes true: the jobs hold a delivery lease until their worker takes them), p_names
--             (only jobs of these names; NULL: every name).
-- Returns: the leased rows in claim order: queue order, then within a queue priority DESC, run_at,
--          id, or for a queue with grouped ready jobs the order of the rotation.
-- Relies on: jobs_deadline (the expired jobs), jobs_scheduled (promotion), jobs_ready or
--            jobs_ready_by_name (the jobs without a group), jobs_ready_grouped or
--            jobs_ready_grouped_by_name (grouped jobs: the probe, the next group, its first job),
--            the primary key (the updates); FOR UPDATE SKIP LOCKED; the queues table's primary
--            key, jobs_active for a limited queue's live leases, jobs_active_grouped for a group's;
--            starts_by_queue and starts_by_group (the windows); group_turns' primary key.
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
  -- statement pick, which sorts each queue's jobs), or its place in the rotation.
  picked_ords bigint[];
  -- Per picked job, its queue's position in p_queues.
  picked_qpos bigint[];
  paused text[];
  limited text[];
  -- The limited queues' rows, as locked.
  locked :"schema".queues[];
  -- Per position of p_queues, the most that queue may give; NULL: no cap of its own.
  room integer[];
  -- Per position of p_queues, the starts its rate allows; NULL: no rate.
  rate_left integer[];
  -- The locked queues with a rate or a group rate: their claims log their starts.
  rated text[];
  -- The queues of the list (with room) that have grouped ready jobs of p_names.
  grouped text[];
  -- The cursor rows this claim holds, as read.
  turn_queues text[];
  turn_lasts text[];
  -- The grouped queues without a cursor row, which a delivery does not make (see Lock order).
  unturned text[] := '{}';
  -- The groups a group rate held back, with their queue, pairwise.
  held_queues text[] := '{}';
  held_groups text[] := '{}';
  rate_full text[];
  -- The rotation, one queue at a time.
  qi integer;
  qname text;
  want integer;
  took integer;
  lim :"schema".queues;
  k text;
  nk text;
  streak text;
  served text;
  got bigint;
  gi integer;
  -- The groups looked at in this claim, and how many more each may start: by its concurrency,
  -- by its rate (NULL: no such limit). Counted once, then decremented as it is served.
  g_keys text[];
  g_conc integer[];
  g_rate integer[];
  -- The groups ('' too) that have nothing more to give in this claim.
  spent text[];
  got_ids bigint[];
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
  IF limited IS NOT NULL THEN
    -- The locked row is the latest: a change committed meanwhile (paused, limit changed or
    -- removed) is what counts.
    IF p_delivered THEN
      SELECT array_agg(l.s) INTO locked
      FROM (SELECT s FROM :"schema".queues AS s WHERE s.queue = ANY (limited)
            ORDER BY s.queue FOR UPDATE SKIP LOCKED) AS l;
    ELSE
      SELECT array_agg(l.s) INTO locked
      FROM (SELECT s FROM :"schema".queues AS s WHERE s.queue = ANY (limited)
            ORDER BY s.queue FOR UPDATE) AS l;
    END IF;
    rated := ARRAY(SELECT c.queue FROM unnest(locked) AS c
                   WHERE c.paused_at IS NULL AND (c.rate_limit IS NOT NULL OR c.group_rate_limit IS NOT NULL));
  END IF;
  IF paused IS NOT NULL OR limited IS NOT NULL THEN
    -- A statement of its own, after the lock: its snapshot holds the leases and the starts of
    -- every claim that held the row before.
    SELECT array_agg(r.room ORDER BY r.ord), array_agg(r.rate_left ORDER BY r.ord) INTO room, rate_left
    FROM (
      SELECT q.ord,
             CASE
               WHEN q.name = ANY (paused) OR c.paused_at IS NOT NULL THEN 0
               WHEN c.queue IS NOT NULL THEN least(
                 CASE WHEN c.concurrency IS NOT NULL THEN greatest(c.concurrency - (
                   SELECT count(*) FROM (
                     SELECT 1 FROM :"schema".jobs AS j
                     WHERE j.state = 'active' AND j.lease_expires_at > at AND j.queue = c.queue
                     LIMIT c.concurrency
                   ) AS live
                 ), 0) END,
                 w.rate_left)
               -- Skipped by a delivery (another claim holds it): nothing this time.
               WHEN q.name = ANY (limited) THEN 0
             END AS room,
             w.rate_left
      FROM unnest(p_queues) WITH ORDINALITY AS q(name, ord)
      LEFT JOIN unnest(locked) AS c ON c.queue = q.name
      LEFT JOIN LATERAL (
        SELECT CASE WHEN c.rate_limit IS NOT NULL AND c.paused_at IS NULL THEN greatest(c.rate_limit - (
                 SELECT count(*) FROM (
                   SELECT 1 FROM :"schema".starts AS st
                   WHERE st.queue = c.queue AND st.started_at > at - c.rate_per_ms
                   LIMIT c.rate_limit
                 ) AS counted
               ), 0) END AS rate_left
      ) AS w ON true
    ) AS r;
  END IF;
  -- Whether any queue of the list with room has grouped ready jobs (of p_names): one seek each.
  IF p_names IS NULL THEN
    grouped := ARRAY(
      SELECT q.name FROM unnest(p_queues) WITH ORDINALITY AS q(name, ord)
      WHERE coalesce(room[q.ord], 1) > 0
        AND EXISTS (SELECT 1 FROM :"schema".jobs AS g
                    WHERE g.state = 'ready' AND g.group_key IS NOT NULL AND g.queue = q.name)
      ORDER BY q.ord
    );
  ELSE
    grouped := ARRAY(
      SELECT q.name FROM unnest(p_queues) WITH ORDINALITY AS q(name, ord)
      WHERE coalesce(room[q.ord], 1) > 0
        AND EXISTS (SELECT 1 FROM :"schema".jobs AS g
                    WHERE g.state = 'ready' AND g.group_key IS NOT NULL AND g.queue = q.name
                      AND g.name = ANY (p_names))
      ORDER BY q.ord
    );
  END IF;
  IF cardinality(grouped) = 0 THEN
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
    picked_qpos := picked_ords;
  ELSE
    -- The cursors of the grouped queues, each locked until the transaction ends (see Lock order).
    IF p_delivered THEN
      SELECT array_agg(t.queue), array_agg(t.last_group) INTO turn_queues, turn_lasts
      FROM (SELECT t.queue, t.last_group FROM :"schema".group_turns AS t WHERE t.queue = ANY (grouped)
            ORDER BY t.queue FOR UPDATE SKIP LOCKED) AS t;
      -- A queue without a cursor row yet: inserting one could wait for a claim inserting it too,
      -- so a delivery goes round its groups from the start, and writes no cursor.
      unturned := ARRAY(SELECT g.name FROM unnest(grouped) AS g(name)
                        WHERE NOT EXISTS (SELECT 1 FROM :"schema".group_turns AS t WHERE t.queue = g.name));
    ELSE
      INSERT INTO :"schema".group_turns (queue)
      SELECT g.name FROM unnest(grouped) AS g(name) ORDER BY g.name
      ON CONFLICT (queue) DO NOTHING;
      SELECT array_agg(t.queue), array_agg(t.last_group) INTO turn_queues, turn_lasts
      FROM (SELECT t.queue, t.last_group FROM :"schema".group_turns AS t WHERE t.queue = ANY (grouped)
            ORDER BY t.queue FOR UPDATE) AS t;
    END IF;
    picked_ids := '{}';
    picked_ords := '{}';
    picked_qpos := '{}';
    FOR qi IN 1 .. cardinality(p_queues) LOOP
      EXIT WHEN cardinality(picked_ids) >= p_limit;
      qname := p_queues[qi];
      want := least(p_limit - cardinality(picked_ids), room[qi]);
      CONTINUE WHEN want <= 0;
      IF NOT qname = ANY (grouped) THEN
        -- A queue without grouped ready jobs: its jobs in claim order, as the statement above.
        IF p_names IS NULL THEN
          got_ids := ARRAY(
            SELECT r.id FROM :"schema".jobs AS r
            WHERE r.state = 'ready' AND r.group_key IS NULL AND r.queue = qname
              AND (r.expires_at IS NULL OR r.expires_at > at)
            ORDER BY r.priority DESC, r.run_at, r.id
            LIMIT want
            FOR UPDATE SKIP LOCKED
          );
        ELSE
          got_ids := ARRAY(
            SELECT m.id
            FROM unnest(p_names) AS n(name)
            CROSS JOIN LATERAL (
              SELECT r.id, r.priority, r.run_at FROM :"schema".jobs AS r
              WHERE r.state = 'ready' AND r.group_key IS NULL AND r.queue = qname AND r.name = n.name
                AND (r.expires_at IS NULL OR r.expires_at > at)
              ORDER BY r.priority DESC, r.run_at, r.id
              LIMIT want
              FOR UPDATE SKIP LOCKED
            ) AS m
            ORDER BY m.priority DESC, m.run_at, m.id
            LIMIT want
          );
        END IF;
        picked_ords := picked_ords
          || ARRAY(SELECT cardinality(picked_ids) + i FROM generate_series(1, cardinality(got_ids)) AS i);
        picked_qpos := picked_qpos || array_fill(qi::bigint, ARRAY[cardinality(got_ids)]);
        picked_ids := picked_ids || got_ids;
        CONTINUE;
      END IF;
      -- A grouped queue: round its groups, from the one after the cursor.
      gi := array_position(turn_queues, qname);
      -- A delivery that found the cursor held by another claim: nothing this time.
      CONTINUE WHEN gi IS NULL AND NOT qname = ANY (unturned);
      k := turn_lasts[gi];
      lim := NULL;
      SELECT c.* INTO lim FROM unnest(locked) AS c WHERE c.queue = qname;
      took := 0;
      streak := NULL;
      served := NULL;
      g_keys := '{}';
      g_conc := '{}';
      g_rate := '{}';
      spent := '{}';
      LOOP
        EXIT WHEN took >= want;
        -- The next group: the jobs without a group ('') first, then the groups in byte order.
        IF k IS NULL THEN
          nk := '';
        ELSIF p_names IS NULL THEN
          nk := NULL;
          SELECT g.group_key INTO nk FROM :"schema".jobs AS g
          WHERE g.state = 'ready' AND g.group_key IS NOT NULL AND g.queue = qname AND g.group_key > k
          ORDER BY g.group_key
          LIMIT 1;
        ELSE
          nk := NULL;
          SELECT min(m.group_key) INTO nk
          FROM unnest(p_names) AS n(name)
          CROSS JOIN LATERAL (
            SELECT g.group_key FROM :"schema".jobs AS g
            WHERE g.state = 'ready' AND g.group_key IS NOT NULL AND g.queue = qname AND g.name = n.name
              AND g.group_key > k
            ORDER BY g.group_key
            LIMIT 1
          ) AS m;
        END IF;
        nk := coalesce(nk, '');
        -- Back where the groups began to give nothing: a full round without a take.
        EXIT WHEN nk = streak;
        got := NULL;
        IF NOT nk = ANY (spent) THEN
          IF nk <> '' THEN
            gi := array_position(g_keys, nk);
            IF gi IS NULL THEN
              g_keys := g_keys || nk;
              g_conc := g_conc || CASE WHEN lim.group_concurrency IS NOT NULL THEN lim.group_concurrency - (
                SELECT count(*)::integer FROM (
                  SELECT 1 FROM :"schema".jobs AS a
                  WHERE a.state = 'active' AND a.group_key IS NOT NULL AND a.queue = qname AND a.group_key = nk
                    AND a.lease_expires_at > at
                  LIMIT lim.group_concurrency
                ) AS live
              ) END;
              g_rate := g_rate || CASE WHEN lim.group_rate_limit IS NOT NULL THEN lim.group_rate_limit - (
                SELECT count(*)::integer FROM (
                  SELECT 1 FROM :"schema".starts AS st
                  WHERE st.queue = qname AND st.group_key = nk AND st.started_at > at - lim.group_rate_per_ms
                  LIMIT lim.group_rate_limit
                ) AS counted
              ) END;
              gi := cardinality(g_keys);
            END IF;
            IF g_rate[gi] <= 0 THEN
              held_queues := held_queues || qname;
              held_groups := held_groups || nk;
            END IF;
          END IF;
          -- The group's first job, or the first without a group.
          IF nk = '' AND p_names IS NULL THEN
            SELECT r.id INTO got FROM :"schema".jobs AS r
            WHERE r.state = 'ready' AND r.group_key IS NULL AND r.queue = qname
              AND (r.expires_at IS NULL OR r.expires_at > at) AND NOT r.id = ANY (picked_ids)
            ORDER BY r.priority DESC, r.run_at, r.id
            LIMIT 1
            FOR UPDATE SKIP LOCKED;
          ELSIF nk = '' THEN
            SELECT m.id INTO got
            FROM unnest(p_names) AS n(name)
            CROSS JOIN LATERAL (
              SELECT r.id, r.priority, r.run_at FROM :"schema".jobs AS r
              WHERE r.state = 'ready' AND r.group_key IS NULL AND r.queue = qname AND r.name = n.name
                AND (r.expires_at IS NULL OR r.expires_at > at) AND NOT r.id = ANY (picked_ids)
              ORDER BY r.priority DESC, r.run_at, r.id
              LIMIT 1
              FOR UPDATE SKIP LOCKED
            ) AS m
            ORDER BY m.priority DESC, m.run_at, m.id
            LIMIT 1;
          ELSIF coalesce(g_conc[gi] > 0, true) AND coalesce(g_rate[gi] > 0, true) AND p_names IS NULL THEN
            SELECT r.id INTO got FROM :"schema".jobs AS r
            WHERE r.state = 'ready' AND r.group_key IS NOT NULL AND r.queue = qname AND r.group_key = nk
              AND (r.expires_at IS NULL OR r.expires_at > at) AND NOT r.id = ANY (picked_ids)
            ORDER BY r.priority DESC, r.run_at, r.id
            LIMIT 1
            FOR UPDATE SKIP LOCKED;
          ELSIF coalesce(g_conc[gi] > 0, true) AND coalesce(g_rate[gi] > 0, true) THEN
            SELECT m.id INTO got
            FROM unnest(p_names) AS n(name)
            CROSS JOIN LATERAL (
              SELECT r.id, r.priority, r.run_at FROM :"schema".jobs AS r
              WHERE r.state = 'ready' AND r.group_key IS NOT NULL AND r.queue = qname AND r.name = n.name
                AND r.group_key = nk AND (r.expires_at IS NULL OR r.expires_at > at) AND NOT r.id = ANY (picked_ids)
              ORDER BY r.priority DESC, r.run_at, r.id
              LIMIT 1
              FOR UPDATE SKIP LOCKED
            ) AS m
            ORDER BY m.priority DESC, m.run_at, m.id
            LIMIT 1;
          END IF;
          IF got IS NULL THEN
            spent := spent || nk;
          END IF;
        END IF;
        IF got IS NOT NULL THEN
          picked_ids := picked_ids || got;
          picked_ords := picked_ords || cardinality(picked_ids)::bigint;
          picked_qpos := picked_qpos || qi::bigint;
          took := took + 1;
          served := nk;
          streak := NULL;
          IF nk <> '' THEN
            g_conc[gi] := g_conc[gi] - 1;
            g_rate[gi] := g_rate[gi] - 1;
          END IF;
        ELSIF streak IS NULL THEN
          streak := nk;
        END IF;
        k := nk;
      END LOOP;
      IF served IS NOT NULL AND NOT qname = ANY (unturned) THEN
        UPDATE :"schema".group_turns AS t SET last_group = served WHERE t.queue = qname;
      END IF;
    END LOOP;
  END IF;
  IF cardinality(picked_ids) > 0 THEN
    -- The picked rows are locked by this transaction now; = ANY(picked_ids) reaches them by
    -- primary key whatever the join is estimated at.
    RETURN QUERY
    WITH leased AS (
      UPDATE :"schema".jobs AS j
      SET state = 'active', attempts = j.attempts + 1, lease_token = p_token_base || '.' || j.id,
          lease_expires_at = at + p_lease_ms, worker_id = p_worker_id, updated_at = at, delivered = p_delivered
      FROM unnest(picked_ids, picked_ords) AS picked(id, ord)
      WHERE j.id = picked.id AND j.id = ANY (picked_ids)
      RETURNING j.*, picked.ord
    )
    SELECT l.id, l.queue, l.name, l.payload, l.state, l.priority, l.run_at, l.attempts, l.max_attempts,
           l.timeout_ms, l.unique_key, l.lease_token, l.lease_expires_at, l.worker_id, l.last_error, l.result,
           l.created_at, l.updated_at, l.finished_at, l.delivered, l.group_key, l.expires_at
    FROM leased AS l
    ORDER BY l.ord, l.priority DESC, l.run_at, l.id;
  END IF;
  -- Nothing more for a claim of queues without a rate (nearly every claim).
  IF cardinality(rated) > 0 THEN
    IF cardinality(picked_ids) > 0 THEN
      INSERT INTO :"schema".starts (queue, group_key, started_at)
      SELECT j.queue, coalesce(j.group_key, ''), at FROM :"schema".jobs AS j
      WHERE j.id = ANY (picked_ids) AND j.queue = ANY (rated);
    END IF;
    -- What the queue's longest window no longer counts.
    DELETE FROM :"schema".starts AS st
    USING unnest(locked) AS c
    WHERE c.queue = ANY (rated) AND st.queue = c.queue
      AND st.started_at <= at - greatest(c.rate_per_ms, c.group_rate_per_ms);
    -- The queues whose own window this claim filled (or found full).
    rate_full := ARRAY(
      SELECT q.name FROM unnest(p_queues, rate_left) WITH ORDINALITY AS q(name, lft, ord)
      WHERE q.lft <= (SELECT count(*) FROM unnest(picked_qpos) AS p(pos) WHERE p.pos = q.ord)
    );
    IF cardinality(rate_full) > 0 OR cardinality(held_queues) > 0 THEN
      -- The wake hint: when the first of the full windows that hold a ready job back lets a start
      -- again, unless the row holds an earlier time still to come.
      UPDATE :"schema".queues AS s SET rate_opens_at = h.opens
      FROM (
        SELECT c.queue, least(
          (SELECT w.started_at + c.rate_per_ms
           FROM (SELECT st.started_at FROM :"schema".starts AS st
                 WHERE st.queue = c.queue AND st.started_at > at - c.rate_per_ms
                 ORDER BY st.started_at DESC OFFSET c.rate_limit - 1 LIMIT 1) AS w
           WHERE c.queue = ANY (rate_full)
             AND (EXISTS (SELECT 1 FROM :"schema".jobs AS r
                          WHERE r.state = 'ready' AND r.group_key IS NULL AND r.queue = c.queue)
                  OR EXISTS (SELECT 1 FROM :"schema".jobs AS r
                             WHERE r.state = 'ready' AND r.group_key IS NOT NULL AND r.queue = c.queue))),
          (SELECT min(w.started_at + c.group_rate_per_ms)
           FROM unnest(held_queues, held_groups) AS g(queue, group_key)
           CROSS JOIN LATERAL (
             SELECT st.started_at FROM :"schema".starts AS st
             WHERE st.queue = g.queue AND st.group_key = g.group_key
               AND st.started_at > at - c.group_rate_per_ms
             ORDER BY st.started_at DESC OFFSET c.group_rate_limit - 1 LIMIT 1
           ) AS w
           WHERE g.queue = c.queue
             AND EXISTS (SELECT 1 FROM :"schema".jobs AS r
                         WHERE r.state = 'ready' AND r.group_key IS NOT NULL AND r.queue = g.queue
                           AND r.group_key = g.group_key))
        ) AS opens
        FROM unnest(locked) AS c
        WHERE c.queue = ANY (rated)
      ) AS h
      WHERE s.queue = h.queue AND h.opens IS NOT NULL
        AND (s.rate_opens_at IS NULL OR s.rate_opens_at <= at OR s.rate_opens_at > h.opens);
    END IF;
  END IF;
END
$$;
