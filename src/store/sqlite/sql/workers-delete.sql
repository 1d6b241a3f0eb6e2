-- removeWorker: deletes a worker's record (none is fine).
-- Params: :worker_id
DELETE FROM ferry_workers WHERE worker_id = :worker_id
