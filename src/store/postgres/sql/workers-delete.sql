-- removeWorker: deletes a worker's record (none is fine).
-- Params: $1 worker id
DELETE FROM :"schema".workers WHERE worker_id = $1::text
