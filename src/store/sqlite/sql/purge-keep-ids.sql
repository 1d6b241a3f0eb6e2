-- purge: before a chunk deletes jobs, raises ferry_ids to the highest id in the table, so that no
-- id the chunk deletes is given again (sql/enqueue-next-id.sql).
-- Params: none
-- Returns: nothing
UPDATE ferry_ids SET purged_up_to = max(purged_up_to, coalesce((SELECT max(id) FROM ferry_jobs), 0))
