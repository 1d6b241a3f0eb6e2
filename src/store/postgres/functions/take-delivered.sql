-- take_delivered: a worker takes jobs it was handed, before it starts them: each gets the worker's
-- lease and stops being a delivery. Fenced by the token; a job whose delivery lease ran out and
-- was put back (or claimed again) is not this worker's any more. A row locked elsewhere is not
-- taken (its delivery lease runs out and recovery, which skips it while it is locked, puts it back
-- in line afterwards).
-- Its commit need not wait for the WAL flush (synchronous_commit off for this transaction only):
-- the delivery that leased the job was flushed, and a take lost in a server crash only leaves the
-- job a delivery again, which recovery puts back in line. That keeps one flush off the path from
-- an enqueue to its handler, which delivery exists to shorten.
-- Parameters: p_id[], p_lease_token[], p_lease_ms, p_now (ms or NULL).
-- Returns: the input positions (1-based) taken; the others went back in line.
-- Relies on: the primary key; FOR UPDATE SKIP LOCKED.
-- Settings: jit = off, lock_timeout = '5s', enable_seqscan = off (README.md); synchronous_commit
--           off, set inside.
CREATE OR REPLACE FUNCTION :"schema".take_delivered(p_id bigint[], p_lease_token text[], p_lease_ms bigint, p_now bigint)
RETURNS SETOF integer
LANGUAGE plpgsql
SET jit = off
SET lock_timeout = '5s'
SET enable_seqscan = off
AS $$
#variable_conflict use_column
DECLARE
  at bigint := coalesce(p_now, :"schema".now_ms());
  lockable bigint[];
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  lockable := ARRAY(SELECT j.id FROM :"schema".jobs AS j WHERE j.id = ANY (p_id) FOR UPDATE SKIP LOCKED);
  RETURN QUERY
  UPDATE :"schema".jobs AS j
  SET lease_expires_at = at + p_lease_ms, updated_at = at, delivered = false
  FROM unnest(p_id, p_lease_token) WITH ORDINALITY AS l(id, lease_token, ord)
  WHERE j.id = l.id AND j.id = ANY (lockable) AND j.state = 'active' AND j.lease_token = l.lease_token
  RETURNING l.ord::integer;
END
$$;
