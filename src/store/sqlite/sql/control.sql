-- control: the workers' control record, read after a stop request if there was one: when workers
-- were last asked to stop.
-- Params: none
-- Returns: at, or no row when nobody ever asked.
SELECT at FROM ferry_control WHERE key = 'stop'
