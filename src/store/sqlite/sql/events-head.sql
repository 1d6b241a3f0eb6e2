-- The log's head: the last seq ever given (sqlite_sequence keeps it across trims), 0 for none.
SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'ferry_events'), 0)
