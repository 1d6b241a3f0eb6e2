-- renew: extends a batch of leases, fenced by the lease token, passing over rows locked by another
-- session (a statement that waited for one locked row held back every lease of the batch with it).
-- An expired but not yet recovered lease may still be renewed, since nobody else can hold the job
-- until recovery. Every renewal ends a delivery for good (delivered = false).
--
-- With p_delivered, the worker takes jobs it was handed (deliver()), before it starts them: each
-- gets the worker's lease and stops being a delivery. A job whose delivery lease ran out and was
-- put back (or claimed again) is not this worker's any more, and neither is one whose row is
-- locked elsewhere: its delivery lease runs out and recovery, which skips it while it is locked,
-- puts it back in line afterwards, so it is reported lost, never 'locked'. That take's commit need
-- not wait for the WAL flush (synchronous_commit off for this transaction only): the delivery that
-- leased the job was flushed, and a take lost in a server crash only leaves the job a delivery
-- again, which recovery puts back in line. That keeps one flush off the path from an enqueue to
-- its handler, which delivery exists to shorten. A plain renewal is flushed, so one lost in a
-- crash cannot make a job that ran look never taken.
-- A plain renewal also writes what each lease's handler reported since the last one (store/kernel/
-- job-reports.ts): its latest progress and its whole log tail, NULL to keep the stored one, and
-- only where the lease is renewed. Both arrays default to NULL (nothing reported), so a worker of
-- a release before migration 0018 calls this as it did.
-- Parameters: p_id[], p_lease_token[], p_lease_ms, p_now (ms or NULL), p_delivered, p_progress[]
--             (JSON text), p_logs[] (JSON array text).
-- Returns: one row per input lease: its position (1-based) and 'ok', 'lease_lost' or 'locked'.
-- Relies on: the primary key; FOR UPDATE SKIP LOCKED.
-- Settings: jit = off, lock_timeout = '5s', enable_seqscan = off (README.md); with p_delivered,
--           synchronous_commit off, set inside.
CREATE OR REPLACE FUNCTION :"schema".renew(
  p_id bigint[], p_lease_token text[], p_lease_ms bigint, p_now bigint, p_delivered boolean DEFAULT false,
  p_progress text[] DEFAULT NULL, p_logs text[] DEFAULT NULL
) RETURNS TABLE (ord integer, result text)
LANGUAGE plpgsql SET jit = off SET lock_timeout = '5s' SET enable_seqscan = off
AS $$
#variable_conflict use_column
DECLARE
  at bigint := coalesce(p_now, :"schema".now_ms());
  lockable bigint[];
  renewed integer[];
BEGIN
  IF p_delivered THEN
    PERFORM set_config('synchronous_commit', 'off', true);
  END IF;
  lockable := ARRAY(SELECT j.id FROM :"schema".jobs AS j WHERE j.id = ANY (p_id) FOR UPDATE SKIP LOCKED);
  WITH done AS (
    UPDATE :"schema".jobs AS j
    SET lease_expires_at = at + p_lease_ms, updated_at = at, delivered = false,
        progress = coalesce(l.progress, j.progress), logs = coalesce(l.logs, j.logs)
    FROM unnest(p_id, p_lease_token, p_progress, p_logs) WITH ORDINALITY AS l(id, lease_token, progress, logs, ord)
    WHERE j.id = l.id AND j.id = ANY (lockable) AND j.state = 'active' AND j.lease_token = l.lease_token
    RETURNING l.ord
  )
  SELECT array_agg(done.ord::integer) INTO renewed FROM done;
  RETURN QUERY
  SELECT l.ord::integer,
         CASE
           WHEN l.ord = ANY (coalesce(renewed, '{}')) THEN 'ok'
           WHEN NOT p_delivered AND l.id IS NOT NULL AND NOT l.id = ANY (lockable)
                AND EXISTS (SELECT 1 FROM :"schema".jobs AS j WHERE j.id = l.id) THEN 'locked'
           ELSE 'lease_lost'
         END
  FROM unnest(p_id) WITH ORDINALITY AS l(id, ord);
END
$$;
