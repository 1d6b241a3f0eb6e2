-- fire_schedule: fires slots of a schedule (Store.fireSchedule) in one atomic step: the schedule's
-- row is locked (FOR UPDATE), and only if it is still as its scheduler read it (the same version
-- and last_slot, not paused: kernel/schedules.ts, fireMayProceed) are its jobs enqueued and its
-- last_slot moved to p_to_slot, in this transaction. Schedulers of every process race for each slot:
-- they queue on the row's lock, and each that gets it after the winner committed reads the row the
-- winner left (FOR UPDATE under READ COMMITTED reads the newest version), its last_slot moved, so
-- it writes nothing and answers 'stale'. The slot's unique key (cron:<id>:<slot>) is the second
-- guard: a key held already gives its holder's id, as any enqueue does.
-- One function, so one round trip, and the row is locked only while the server runs it: never
-- across the network, or while a scheduler's process is paused (a transaction of several
-- statements from the store would hold it for each round trip, with every other scheduler waiting).
-- The jobs go through enqueue_batch(), as a batch of the store's enqueue does: the same unique-key
-- rules, deliveries to waiting workers (with p_delivery_token_base) and wake-ups.
-- Overlap 'skip': while the job of the last fire (last_job_id) is in one of p_unfinished (the
-- kernel's UNFINISHED_STATES, passed in so the rule is written once), the slots are passed over:
-- last_slot moves, nothing is enqueued. A purged job counts as finished.
-- Parameters: p_id, p_version, p_last_slot (the schedule as read), p_to_slot, p_unfinished,
--             then enqueue_batch's arrays in its order (one element per job, oldest slot first;
--             empty when every slot is passed over), p_now (ms, or NULL for the server's clock),
--             p_delivery_token_base (the lease tokens' random base for deliveries).
-- Returns: one row: outcome ('fired', 'overlap' or 'stale'), ids (of 'fired': the jobs' ids joined
--          by ',', in the order given; NULL when none), schedule (of 'stale': the row as it is now,
--          NULL when it is gone).
-- Relies on: the schedules table's primary key (the lock); the jobs primary key (the last job's
--            state); enqueue_batch().
-- Settings: jit = off, enable_seqscan = off (README.md: a plan made while the jobs table was small
--           would read it whole for the last job's state).
CREATE OR REPLACE FUNCTION :"schema".fire_schedule(
  p_id text, p_version bigint, p_last_slot bigint, p_to_slot bigint, p_unfinished text[], p_queue text[],
  p_name text[], p_payload text[], p_priority integer[], p_run_at bigint[], p_delay_ms bigint[],
  p_max_attempts integer[], p_timeout_ms integer[], p_unique_key text[], p_group text[], p_expires_at bigint[],
  p_expires_in_ms bigint[], p_meta text[], p_now bigint, p_delivery_token_base text
) RETURNS TABLE (outcome text, ids text, schedule :"schema".schedules)
LANGUAGE plpgsql SET jit = off SET enable_seqscan = off
AS $$
#variable_conflict use_column
DECLARE
  s :"schema".schedules;
  fired bigint[];
BEGIN
  SELECT x.* INTO s FROM :"schema".schedules AS x WHERE x.id = p_id FOR UPDATE;
  IF NOT FOUND THEN
    RETURN QUERY SELECT 'stale'::text, NULL::text, NULL:::"schema".schedules;
    RETURN;
  END IF;
  IF s.paused_at IS NOT NULL OR s.version <> p_version OR s.last_slot <> p_last_slot THEN
    RETURN QUERY SELECT 'stale'::text, NULL::text, s;
    RETURN;
  END IF;
  IF s.overlap = 'skip'
     AND EXISTS (SELECT 1 FROM :"schema".jobs AS j WHERE j.id = s.last_job_id AND j.state = ANY (p_unfinished)) THEN
    UPDATE :"schema".schedules AS x SET last_slot = p_to_slot WHERE x.id = p_id;
    RETURN QUERY SELECT 'overlap'::text, NULL::text, NULL:::"schema".schedules;
    RETURN;
  END IF;
  IF cardinality(p_queue) > 0 THEN
    fired := ARRAY(
      SELECT e.id
      FROM :"schema".enqueue_batch(p_queue, p_name, p_payload, p_priority, p_run_at, p_delay_ms, p_max_attempts,
                                   p_timeout_ms, p_unique_key, p_now, p_delivery_token_base, p_group, p_expires_at,
                                   p_expires_in_ms, p_meta) WITH ORDINALITY AS e(id, created, ord)
      ORDER BY e.ord
    );
  END IF;
  -- The last job, for the overlap policy: the last slot's (its key's holder, if it was held).
  UPDATE :"schema".schedules AS x
  SET last_slot = p_to_slot, last_job_id = coalesce(fired[cardinality(fired)], x.last_job_id)
  WHERE x.id = p_id;
  RETURN QUERY SELECT 'fired'::text, array_to_string(fired, ','), NULL:::"schema".schedules;
END
$$;
