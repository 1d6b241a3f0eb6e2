-- schedules-version: the store's schedules version, which every change of a schedule moves
-- (schedules-version-bump.sql): schedulers reload when it is not the one they loaded.
-- Params: none
-- Returns: at (the version), or no row before the first change.
SELECT at FROM ferry_control WHERE key = 'schedules'
