-- heartbeat: writes a worker's record as its heartbeat tells it, renewed until :expires_at.
-- Params: :worker_id, :info (WorkerInfo as JSON text), :heartbeat_at, :expires_at
-- Uses: ferry_workers's primary key.
INSERT INTO ferry_workers (worker_id, info, heartbeat_at, expires_at)
VALUES (:worker_id, :info, :heartbeat_at, :expires_at)
ON CONFLICT (worker_id) DO UPDATE SET info = excluded.info, heartbeat_at = excluded.heartbeat_at,
  expires_at = excluded.expires_at
