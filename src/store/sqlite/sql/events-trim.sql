-- Deletes the events up to a seq (EventChannel's trim, by age and count). Parameters: seq.
DELETE FROM ferry_events WHERE seq <= ?
