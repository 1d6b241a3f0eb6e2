-- Advances the log's head by one without an event: a subscriber registering with nobody else
-- registered covers the log from the new head, so any cursor from before (written in a time no
-- events were kept) reads as a gap. sqlite_sequence is SQLite's own, and may be written so; its
-- row for the table exists once an event was appended (events-seq-row.sql makes it before).
-- Parameters: none.
UPDATE sqlite_sequence SET seq = seq + 1 WHERE name = 'ferry_events'
