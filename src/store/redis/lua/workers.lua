-- workers: the records of the workers whose heartbeat has not expired (heartbeat.lua). Read only.
-- include: lib/prelude.lua, lib/namespace-check.lua
-- flags: allow-oom
-- KEYS, ARGV 1-4: the common layout (prelude.lua).
-- Returns: { record, ... }: each its heartbeat time, a space, and its WorkerInfo (JSON), in no
--   particular order (the store sorts them).
-- Cost: one ZRANGEBYSCORE and HMGET over the live workers, a few dozen.
local ids = redis.call('ZRANGEBYSCORE', K_WORKER_EXPIRIES, '(' .. string.format('%d', NOW), '+inf')
local records = {}
for first = 1, #ids, UNPACK_MAX do
  local part = redis.call('HMGET', K_WORKERS, unpack(ids, first, math.min(first + UNPACK_MAX - 1, #ids)))
  for n = 1, #part do
    if part[n] then records[#records + 1] = part[n] end
  end
end
return records
