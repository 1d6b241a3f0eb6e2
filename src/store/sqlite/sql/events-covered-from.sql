-- The seq after which the log holds every event (see migration 0013).
SELECT covered_from FROM ferry_event_log WHERE id = 1
