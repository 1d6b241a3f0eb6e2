-- listJobs: newest first, keyset-paged by id, in one statement. First a walk down the index that
-- answers the filters it can (the walk's own: $2-$4, each NULL when that index is not the one to
-- walk), at most $5 rows; then the jobs among them that pass every filter, at most $6.
-- Params: $1 up_to (the highest id to look at: the cursor's id - 1, or the largest id),
--   $2 walk state (a state other than completed, or NULL), $3 walk queue (only with $2), $4 walk
--   unique key, $5 budget (rows the walk reads at most: limit + 1 when the walk's filters are all
--   of them), $6 limit + 1, then the filters, NULL when not given: $7 state, $8 queue, $9 name,
--   $10 created_after (inclusive), $11 created_before (exclusive), $12 payload_contains (JSON text).
-- Returns: `looked` (rows the walk read) and `walk_floor` (the lowest id it read, where the next
--   page resumes when it read all $5 and found no more than the limit) on every row, and the jobs;
--   one row with a NULL id when none passed.
-- Uses: a custom plan per call (an unnamed statement), in which each NULL filter folds away and
--   the walk takes jobs_listed_by_queue_state, jobs_listed_by_state (migrations/0020; the literal
--   `state <> 'completed'` lets the planner prove their WHERE), jobs_held_unique_key, or the
--   primary key backwards. The jobs are then read again from the primary key's range the walk
--   covered: payload containment casts only those rows.
WITH walk AS (
  SELECT j.id FROM :"schema".jobs AS j
  WHERE j.id <= $1::bigint
    AND ($2::text IS NULL OR (j.state = $2::text AND j.state <> 'completed'))
    AND ($3::text IS NULL OR j.queue = $3::text)
    AND ($4::text IS NULL OR j.held_unique_key = $4::text)
  ORDER BY j.id DESC
  LIMIT $5::integer
),
bounds AS (SELECT min(w.id) AS walk_floor, count(*)::integer AS looked FROM walk AS w)
SELECT b.walk_floor, b.looked, j.*
FROM bounds AS b
LEFT JOIN LATERAL (
  SELECT * FROM :"schema".jobs AS j
  WHERE j.id <= $1::bigint AND j.id >= b.walk_floor
    AND ($2::text IS NULL OR (j.state = $2::text AND j.state <> 'completed'))
    AND ($3::text IS NULL OR j.queue = $3::text)
    AND ($4::text IS NULL OR j.held_unique_key = $4::text)
    AND ($7::text IS NULL OR j.state = $7::text)
    AND ($8::text IS NULL OR j.queue = $8::text)
    AND ($9::text IS NULL OR j.name = $9::text)
    AND ($10::bigint IS NULL OR j.created_at >= $10::bigint)
    AND ($11::bigint IS NULL OR j.created_at < $11::bigint)
    AND ($12::text IS NULL OR j.payload::jsonb @> $12::jsonb)
  ORDER BY j.id DESC
  LIMIT $6::integer
) AS j ON true
ORDER BY j.id DESC
