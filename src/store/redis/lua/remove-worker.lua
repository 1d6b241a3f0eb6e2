-- removeWorker: deletes a worker's record (heartbeat.lua), if it has one.
-- include: lib/prelude.lua, lib/namespace-check.lua
-- flags: allow-oom
-- KEYS, ARGV 1-4: the common layout (prelude.lua).
-- ARGV FIRST: the worker id.
-- Returns: 1.
redis.call('HDEL', K_WORKERS, ARGV[FIRST])
redis.call('ZREM', K_WORKER_EXPIRIES, ARGV[FIRST])
return 1
