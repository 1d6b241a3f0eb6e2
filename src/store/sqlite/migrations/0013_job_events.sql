-- Job events across processes (docs/events.md): a log written only while someone subscribes.
--
-- The log: one row per event, seq its cursor. AUTOINCREMENT so that a seq is never reused once
-- trimmed, and a cursor from before a trim is told apart from one after it.
CREATE TABLE ferry_events (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  at INTEGER NOT NULL,
  type TEXT NOT NULL,
  job_id INTEGER NOT NULL,
  queue TEXT NOT NULL,
  name TEXT NOT NULL,
  -- attempt, runAt, result, error: what the type carries, as JSON; NULL for none.
  data TEXT
) STRICT;

-- The subscribers: while one is registered and not expired, writers append events. A writer's
-- check is one lookup in this small table.
CREATE TABLE ferry_event_subscribers (
  id TEXT PRIMARY KEY,
  expires_at INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

-- covered_from: the log holds every event after this seq (the head when a subscriber registered
-- with nobody else registered, or the last seq a trim deleted). A cursor before it is a gap.
CREATE TABLE ferry_event_log (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  covered_from INTEGER NOT NULL
) STRICT;
INSERT INTO ferry_event_log (id, covered_from) VALUES (1, 0);
