-- prune: where a queue's count limit cuts its finished jobs of a state: the keep-th newest (the
-- jobs before it, in finish order then id, go). Reads `keep` index entries, the size of the limit.
-- Params: $1 state, $2 queue, $3 offset (keep - 1)
-- Returns: finished_at, id (as text); no row when the queue has no more than `keep` such jobs.
-- Uses: jobs_retention, read backward from the queue's newest.
SELECT j.finished_at, j.id::text AS id FROM :"schema".jobs AS j
WHERE j.state = $1::text AND j.queue = $2::text AND j.finished_at IS NOT NULL AND j.keep_for_ms IS NULL
ORDER BY j.finished_at DESC, j.id DESC
LIMIT 1 OFFSET $3::integer
