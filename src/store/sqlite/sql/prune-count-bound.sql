-- prune: where a queue's count limit cuts its finished jobs of a state: the keep-th newest (the
-- jobs before it, in finish order then id, go). Reads `keep` index entries, the size of the limit.
-- Params: :state, :queue, :offset (keep - 1)
-- Returns: finished_at, id; none when the queue has no more than `keep` such jobs.
-- Uses: ferry_jobs_retention, read from its newest end.
SELECT finished_at, id FROM ferry_jobs
WHERE state = :state AND queue = :queue AND finished_at IS NOT NULL AND keep_for_ms IS NULL
ORDER BY finished_at DESC, id DESC
LIMIT 1 OFFSET :offset
