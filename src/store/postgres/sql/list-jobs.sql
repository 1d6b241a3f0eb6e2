-- listJobs: newest first, optionally one state and/or one queue, keyset-paged by id.
-- Params: $1 state (or NULL), $2 queue (or NULL), $3 before_id (cursor, or NULL), $4 limit
-- Returns: rows.
-- Uses: the primary key, read backwards from $3.
SELECT * FROM :"schema".jobs
WHERE ($1::text IS NULL OR state = $1::text)
  AND ($2::text IS NULL OR queue = $2::text)
  AND ($3::bigint IS NULL OR id < $3::bigint)
ORDER BY id DESC
LIMIT $4::integer
