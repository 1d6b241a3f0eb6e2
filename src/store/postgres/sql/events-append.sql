-- Appends job events (EventChannel.append) and notifies subscribers' listeners of the last seq.
-- Params: $1 at bigint[], $2 type text[], $3 job id bigint[], $4 queue text[], $5 name text[],
-- $6 data text[], $7 the notify channel. Returns: one row.
-- The advisory lock (until commit) is taken before any row draws its seq: appends commit in seq
-- order, so a reader never sees a seq before a smaller one that commits later.
WITH locked AS (
  SELECT pg_advisory_xact_lock(hashtext(:'schema' || '.events'))
), added AS (
  INSERT INTO :"schema".events (at, type, job_id, queue, name, data)
  SELECT e.at, e.type, e.job_id, e.queue, e.name, e.data
  FROM locked, unnest($1::bigint[], $2::text[], $3::bigint[], $4::text[], $5::text[], $6::text[])
    AS e (at, type, job_id, queue, name, data)
  RETURNING seq
)
SELECT pg_notify($7, max(seq)::text) FROM added
