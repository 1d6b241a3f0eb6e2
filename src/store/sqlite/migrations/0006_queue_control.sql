-- Queue control (`ferry pause`, `ferry limit`): one row per queue with a setting, none for a queue
-- that runs without any (store/kernel/queue-control.ts). Every claim reads the whole table, which
-- holds only the queues an operator set something on, so a store without settings reads an empty
-- table. Times are epoch ms.
CREATE TABLE ferry_queues (
  queue        TEXT PRIMARY KEY,
  paused_at    INTEGER,
  paused_by    TEXT,
  pause_reason TEXT,
  -- At most this many of the queue's jobs holding a live lease at once; NULL: no limit.
  concurrency  INTEGER
) STRICT, WITHOUT ROWID;
