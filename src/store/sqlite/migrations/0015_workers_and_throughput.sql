-- The worker registry and the per-minute throughput (store-workers.ts): what each running worker
-- says of itself, and the jobs workers settled per minute and queue, both written by a worker's
-- heartbeat (one transaction per worker every few seconds, never one per job) and read by the
-- dashboard. New tables only: nothing of the jobs changes.
--
-- A worker's record: its WorkerInfo as JSON text, when its last heartbeat was (the store's clock)
-- and when the record expires unless renewed. expires_at is indexed: a heartbeat deletes a few of
-- the expired records (sql/workers-delete-expired.sql).
CREATE TABLE ferry_workers (
  worker_id TEXT PRIMARY KEY,
  info TEXT NOT NULL,
  heartbeat_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
CREATE INDEX ferry_workers_expiry ON ferry_workers (expires_at);

-- Jobs settled per minute (epoch ms of its start) and queue: a heartbeat adds its worker's counts
-- (sql/throughput-add.sql), so several workers' counts of one minute add up. Kept a day: in
-- minute order, a heartbeat deletes the oldest past that (sql/throughput-delete-old.sql).
CREATE TABLE ferry_throughput (
  minute INTEGER NOT NULL,
  queue TEXT NOT NULL,
  completed INTEGER NOT NULL,
  failed INTEGER NOT NULL,
  PRIMARY KEY (minute, queue)
) STRICT, WITHOUT ROWID;
