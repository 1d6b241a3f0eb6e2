-- control: the workers' control record, read: when workers were last asked to stop.
-- Params: none
-- Returns: at, or no row when nobody ever asked.
SELECT at FROM :"schema".control WHERE key = 'stop'
