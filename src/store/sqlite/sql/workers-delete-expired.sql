-- heartbeat: deletes up to :limit worker records that expired by :now (workers that stopped
-- without removing theirs: killed, or cut off from the store).
-- Params: :now, :limit
-- Uses: ferry_workers_expiry (migrations/0015), from its start: only the expired are read.
DELETE FROM ferry_workers WHERE worker_id IN (
  SELECT worker_id FROM ferry_workers WHERE expires_at <= :now ORDER BY expires_at LIMIT :limit
)
