-- enqueue: the id the next new job takes, read under the write lock before the first run of rows
-- (enqueue-rows.ts): one above every id in the table and every id a purge may have deleted
-- (ferry_ids, migrations/0005), so no id is given twice. Ids are given in the order of the jobs,
-- one each that is created. enqueue.sql finds a lone job's id by the same expression.
-- Params: none
-- Returns: next_id
-- Uses: the table's rowid (its last row) and ferry_ids' one row.
SELECT max(coalesce((SELECT max(id) FROM ferry_jobs), 0), (SELECT purged_up_to FROM ferry_ids)) + 1 AS next_id
