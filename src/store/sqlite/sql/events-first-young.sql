-- The first event at or after a time: the walk from the oldest stops there, so it reads only
-- the events a trim by age deletes. Parameters: at. Returns seq or nothing.
SELECT seq FROM ferry_events WHERE at >= ? ORDER BY seq LIMIT 1
