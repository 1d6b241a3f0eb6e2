-- heartbeat: deletes up to :limit counts of minutes before :before (older than a day).
-- Params: :before, :limit
-- Uses: ferry_throughput's primary key, from its start: only the old are read.
DELETE FROM ferry_throughput WHERE (minute, queue) IN (
  SELECT minute, queue FROM ferry_throughput WHERE minute < :before ORDER BY minute LIMIT :limit
)
