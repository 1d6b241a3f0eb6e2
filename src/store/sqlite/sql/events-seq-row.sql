-- Makes sqlite_sequence's row for ferry_events if no event was ever appended (it has no unique
-- name, so an INSERT must check first). Parameters: none.
INSERT INTO sqlite_sequence (name, seq)
  SELECT 'ferry_events', 0 WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'ferry_events')
