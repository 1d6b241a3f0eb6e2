-- Moves the start of the log's coverage forward to a seq (never back). Parameters: seq.
UPDATE ferry_event_log SET covered_from = max(covered_from, ?) WHERE id = 1
