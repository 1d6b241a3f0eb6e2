-- claim_rates: what claim() does for the queues of its list with a rate or a group rate, once
-- the jobs are leased: it logs a start for each job taken of them (the starts table: queue, group
-- or '', the claim's instant), prunes what each queue's longest window no longer counts, and when
-- a rate held a ready job back, writes the queue's wake hint: rate_opens_at, the earliest time one
-- of the full windows lets a start again (its limit-th newest start + perMs), unless the row holds
-- an earlier time still to come. A window held a job back when it is full after the claim (the
-- queue's own: the claim took what it allowed, or it allowed nothing; a group's: the rotation
-- found it at its rate) and a job of the queue, or of that group, is still ready. Called only from
-- claim(), in its transaction, which holds these queues' rows locked.
-- Parameters: p_queues and p_at (the claim's instant), as claim(); p_rated (the queues with a rate
--             or a group rate, whose rows claim() holds locked), p_rate_left (per position of
--             p_queues, the starts its rate allowed before the claim; NULL: no rate),
--             p_picked_ids and p_picked_qpos (the jobs leased, and their queue's position),
--             p_held_queues and p_held_groups (the groups the rotation found at their rate).
-- Returns: nothing.
-- Relies on: the primary key (the jobs taken), starts_by_queue and starts_by_group (the windows,
--            newest first, and the pruning), jobs_ready and jobs_grouped (what is still ready),
--            the queues table's primary key (the rated queues' settings).
-- Settings: jit = off, enable_seqscan = off (README.md), as claim().
CREATE OR REPLACE FUNCTION :"schema".claim_rates(
  p_queues text[], p_at bigint, p_rated text[], p_rate_left integer[], p_picked_ids bigint[],
  p_picked_qpos bigint[], p_held_queues text[], p_held_groups text[]
) RETURNS void
LANGUAGE plpgsql SET jit = off SET enable_seqscan = off
AS $$
#variable_conflict use_column
DECLARE
  at bigint := p_at;
  -- The queues whose own window this claim filled, or found full.
  rate_full text[];
BEGIN
  IF cardinality(p_picked_ids) > 0 THEN
    INSERT INTO :"schema".starts (queue, group_key, started_at)
    SELECT j.queue, coalesce(j.group_key, ''), at FROM :"schema".jobs AS j
    WHERE j.id = ANY (p_picked_ids) AND j.queue = ANY (p_rated);
  END IF;
  -- What the queue's longest window no longer counts.
  DELETE FROM :"schema".starts AS st
  USING :"schema".queues AS c
  WHERE c.queue = ANY (p_rated) AND st.queue = c.queue
    AND st.started_at <= at - greatest(c.rate_per_ms, c.group_rate_per_ms);
  rate_full := ARRAY(
    SELECT q.name FROM unnest(p_queues, p_rate_left) WITH ORDINALITY AS q(name, lft, ord)
    WHERE q.lft <= (SELECT count(*) FROM unnest(p_picked_qpos) AS p(pos) WHERE p.pos = q.ord)
  );
  IF cardinality(rate_full) > 0 OR cardinality(p_held_queues) > 0 THEN
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
         FROM unnest(p_held_queues, p_held_groups) AS g(queue, group_key)
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
      FROM :"schema".queues AS c
      WHERE c.queue = ANY (p_rated)
    ) AS h
    WHERE s.queue = h.queue AND h.opens IS NOT NULL
      AND (s.rate_opens_at IS NULL OR s.rate_opens_at <= at OR s.rate_opens_at > h.opens);
  END IF;
END
$$;
