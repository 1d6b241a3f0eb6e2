-- schedules-list: every schedule, by id (store/kernel/schedules.ts reads the rows).
-- Params: none
-- Returns: ferry_schedules rows.
SELECT * FROM ferry_schedules ORDER BY id
