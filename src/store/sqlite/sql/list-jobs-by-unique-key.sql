-- listJobs of a unique key: the job holding it, if any (the other filters checked on it).
-- Params: :up_to (the highest id to look at: the cursor's id - 1, or the largest id), :budget
--   (most rows to read), :unique_key, and the filters, each NULL when not given: :state, :queue, :name,
--   :created_after (inclusive), :created_before (exclusive).
-- Returns: ids newest first, each with `listed` (1 when it passes every filter): ids alone, since a
--   walk that finds little reads thousands of rows and each becomes a JS object; the store reads a
--   page's jobs by id after. It reads the walk lazily and stops once a page is full: a page of an
--   index that holds only matching rows reads limit + 1 rows; one with other filters reads at most
--   :budget, then resumes below.
-- Uses: ferry_jobs_held_unique_key.
SELECT ((:state IS NULL OR state = :state) AND (:queue IS NULL OR queue = :queue)
        AND (:name IS NULL OR name = :name)
        AND (:created_after IS NULL OR created_at >= :created_after)
        AND (:created_before IS NULL OR created_at < :created_before)) AS listed, id
FROM ferry_jobs INDEXED BY ferry_jobs_held_unique_key
WHERE held_unique_key = :unique_key AND id <= :up_to
ORDER BY id DESC
LIMIT :budget
