-- The worker registry and the per-minute throughput (store-workers.ts): what each running worker
-- says of itself, and the jobs workers settled per minute and queue, both written by a worker's
-- heartbeat (one statement per worker every few seconds, never one per job: sql/heartbeat.sql)
-- and read by the dashboard. New tables only: nothing of the jobs changes.
--
-- A worker's record: its WorkerInfo as JSON text, when its last heartbeat was (the store's clock)
-- and when the record expires unless renewed; a heartbeat deletes a few expired records, found
-- by workers_expiry.
CREATE TABLE :"schema".workers (
  worker_id text PRIMARY KEY,
  info text NOT NULL,
  heartbeat_at bigint NOT NULL,
  expires_at bigint NOT NULL
);
CREATE INDEX workers_expiry ON :"schema".workers (expires_at);

-- Jobs settled per minute (epoch ms of its start) and queue: heartbeats add their workers'
-- counts, so several workers' counts of one minute add up. Kept a day: in minute order, a
-- heartbeat deletes the oldest past that.
CREATE TABLE :"schema".throughput (
  minute bigint NOT NULL,
  queue text NOT NULL,
  completed bigint NOT NULL,
  failed bigint NOT NULL,
  PRIMARY KEY (minute, queue)
);
