-- listJobs: newest first, optionally one state and/or one queue, keyset-paged by id.
-- Params: :state (or NULL), :queue (or NULL), :before_id (cursor, or NULL), :limit
-- Returns: rows.
-- Uses: the primary key, read backwards from :before_id.
SELECT * FROM ferry_jobs
WHERE (:state IS NULL OR state = :state)
  AND (:queue IS NULL OR queue = :queue)
  AND (:before_id IS NULL OR id < :before_id)
ORDER BY id DESC
LIMIT :limit
