-- claim_rotation: claim()'s pick when a queue of its list has grouped ready jobs (of p_names):
-- each queue of the list in turn, in strict order, until p_limit jobs are picked. A queue without
-- grouped ready jobs gives its next jobs in claim order (jobs_ready, or jobs_ready_by_name merged),
-- as claim()'s statement does; a grouped queue gives them round its groups, one job per turn, from
-- the group after the one it served last (its group_turns row): the jobs without a group first,
-- as one group (''), then the groups in byte order, each group's first job in claim order
-- (jobs_grouped), passing over a group at its group concurrency limit or its group rate (counted
-- once per group, then decremented as it is served), or with nothing left to give; a full round
-- of groups without a take ends the queue's share. The group last served is written back. The
-- rows are locked here (FOR UPDATE SKIP LOCKED) and leased by claim(). Called only from claim(),
-- in its transaction, after it locked the limited queues' rows and worked out their room.
-- Locking: the cursor rows of the grouped queues with room are made where missing, then locked,
-- each in one statement by name (claim.sql: Lock order), and held until the transaction ends, so
-- the claims of a grouped queue run one at a time. A delivery (p_delivered) takes them SKIP
-- LOCKED and makes none: a queue whose row another claim holds gives it nothing, one without a
-- row is gone round from the start, and its cursor is left for the next claim to make.
-- Cost: per job of a grouped queue, a seek for the next group (jobs_grouped: (queue, state,
-- group_key), the names filtered there), the first time a group comes up two bounded counts (its
-- live leases: group_live_leases(); its starts: starts_by_group), and a seek for its first job. A
-- claim that finds every group at its limits looks at each of them once.
-- Parameters: p_queues, p_limit, p_names, p_at (the claim's instant), p_delivered, as claim();
--             p_room (per position of p_queues, the most it may give; NULL: no cap),
--             p_locked_queues (the limited queues whose rows claim() holds locked: their limits).
-- Returns: picked_ids (claim order), picked_ords (each one's place in it), picked_qpos (each
--          one's queue's position in p_queues); held_queues and held_groups, pairwise: the groups
--          that their group rate held back (claim_rates() writes the wake hint of their queues).
-- Relies on: jobs_ready, jobs_ready_by_name, jobs_grouped; group_live_leases(); starts_by_group;
--            group_turns' primary key; FOR UPDATE SKIP LOCKED.
-- Settings: jit = off, enable_seqscan = off (README.md), as claim().
CREATE OR REPLACE FUNCTION :"schema".claim_rotation(
  p_queues text[], p_limit integer, p_names text[], p_at bigint, p_delivered boolean, p_room integer[],
  p_locked_queues text[], OUT picked_ids bigint[], OUT picked_ords bigint[], OUT picked_qpos bigint[],
  OUT held_queues text[], OUT held_groups text[]
)
LANGUAGE plpgsql SET jit = off SET enable_seqscan = off
AS $$
#variable_conflict use_column
DECLARE
  at bigint := p_at;
  room integer[] := p_room;
  -- The queues of the list with grouped ready jobs (of p_names) that may give something: their
  -- cursors are locked.
  grouped text[];
  -- The cursor rows this claim holds, as read.
  turn_queues text[];
  turn_lasts text[];
  -- The grouped queues without a cursor row, which a delivery does not make.
  unturned text[] := '{}';
  qi integer;
  qname text;
  want integer;
  took integer;
  lim :"schema".queues;
  k text;
  nk text;
  -- Where the groups began to give nothing: back there, a full round without a take.
  streak text;
  served text;
  got bigint;
  got_ids bigint[];
  gi integer;
  -- The groups looked at in this claim, and how many more each may start: by its concurrency,
  -- by its rate (NULL: no such limit). Counted once, then decremented as it is served.
  g_keys text[];
  g_conc integer[];
  g_rate integer[];
  -- The groups ('' too) that have nothing more to give in this claim.
  spent text[];
BEGIN
  held_queues := '{}';
  held_groups := '{}';
  grouped := ARRAY(
    SELECT q.name FROM unnest(p_queues) WITH ORDINALITY AS q(name, ord)
    WHERE coalesce(room[q.ord], 1) > 0
      AND EXISTS (SELECT 1 FROM :"schema".jobs AS g
                  WHERE g.state = 'ready' AND g.group_key IS NOT NULL AND g.queue = q.name
                    AND (p_names IS NULL OR g.name = ANY (p_names)))
    ORDER BY q.ord
  );
  -- The cursors, each locked until the transaction ends.
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
      -- A queue without grouped ready jobs: its jobs in claim order, as claim()'s statement reads them.
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
    -- Its limits, from the row claim() holds locked (none: no group limit).
    lim := NULL;
    SELECT s.* INTO lim FROM :"schema".queues AS s WHERE s.queue = qname AND s.queue = ANY (p_locked_queues);
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
      ELSE
        nk := NULL;
        SELECT g.group_key INTO nk FROM :"schema".jobs AS g
        WHERE g.state = 'ready' AND g.group_key IS NOT NULL AND g.queue = qname AND g.group_key > k
          AND (p_names IS NULL OR g.name = ANY (p_names))
        ORDER BY g.group_key
        LIMIT 1;
        nk := coalesce(nk, '');
      END IF;
      -- Back where the groups began to give nothing: a full round without a take.
      EXIT WHEN nk = streak;
      got := NULL;
      IF NOT nk = ANY (spent) THEN
        IF nk <> '' THEN
          gi := array_position(g_keys, nk);
          IF gi IS NULL THEN
            g_keys := g_keys || nk;
            g_conc := g_conc || CASE WHEN lim.group_concurrency IS NOT NULL
                                     THEN lim.group_concurrency
                                          - :"schema".group_live_leases(qname, nk, at, lim.group_concurrency)
                                END;
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
        ELSIF coalesce(g_conc[gi] > 0, true) AND coalesce(g_rate[gi] > 0, true) THEN
          SELECT r.id INTO got FROM :"schema".jobs AS r
          WHERE r.state = 'ready' AND r.group_key IS NOT NULL AND r.queue = qname AND r.group_key = nk
            AND (r.expires_at IS NULL OR r.expires_at > at) AND (p_names IS NULL OR r.name = ANY (p_names))
            AND NOT r.id = ANY (picked_ids)
          ORDER BY r.priority DESC, r.run_at, r.id
          LIMIT 1
          FOR UPDATE SKIP LOCKED;
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
END
$$;
