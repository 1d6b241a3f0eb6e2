-- heartbeat: a worker's record written, its counts added, and a bounded share of the cleaning
-- (expired records, minutes older than a day), in one step: one call per worker per heartbeat.
-- A record is the worker's JSON after its heartbeat time (NOW) and a space, in the workers hash,
-- with its expiry in the worker expiries zset. A minute's counts are its throughput hash ('c' or
-- 'f', a space and the queue: queue names hold no space), named in the throughput minutes zset,
-- which the cleaning and throughput.lua read in minute order; the hash also expires on its own a
-- day (and a minute) after its minute, so that nothing stays once every worker is gone.
-- Not allow-oom: it may add a minute's hash, and nothing but the dashboard needs it; a worker whose
-- heartbeat is refused keeps its counts for the next one.
-- include: lib/prelude.lua, lib/namespace-check.lua
-- KEYS, ARGV 1-4: the common layout (prelude.lua).
-- ARGV FIRST: the worker id; FIRST + 1: its WorkerInfo (JSON); FIRST + 2: the ttl (ms); FIRST + 3:
--   the day kept (ms); FIRST + 4: most expired records to delete; FIRST + 5: most old minutes to
--   delete; then four per count: minute, queue, completed, failed (merged and ordered by the store).
-- Returns: 1.
local worker_id, info = ARGV[FIRST], ARGV[FIRST + 1]
local ttl, keep_ms = tonumber(ARGV[FIRST + 2]), tonumber(ARGV[FIRST + 3])
local expired_max, old_max = tonumber(ARGV[FIRST + 4]), tonumber(ARGV[FIRST + 5])
local kept_from = NOW - keep_ms

local expired = redis.call('ZRANGEBYSCORE', K_WORKER_EXPIRIES, '-inf', NOW, 'LIMIT', 0, expired_max)
if #expired > 0 then
  redis.call('HDEL', K_WORKERS, unpack(expired))
  redis.call('ZREM', K_WORKER_EXPIRIES, unpack(expired))
end
redis.call('HSET', K_WORKERS, worker_id, string.format('%d', NOW) .. ' ' .. info)
redis.call('ZADD', K_WORKER_EXPIRIES, NOW + ttl, worker_id)

local old = redis.call('ZRANGEBYSCORE', K_THROUGHPUT_MINUTES, '-inf', '(' .. string.format('%d', kept_from),
  'LIMIT', 0, old_max)
for _, minute in ipairs(old) do redis.call('DEL', P_THROUGHPUT .. minute) end
if #old > 0 then redis.call('ZREM', K_THROUGHPUT_MINUTES, unpack(old)) end

for i = FIRST + 6, #ARGV, 4 do
  local minute = tonumber(ARGV[i])
  if minute >= kept_from then
    local key, queue = P_THROUGHPUT .. ARGV[i], ARGV[i + 1]
    local completed, failed = tonumber(ARGV[i + 2]), tonumber(ARGV[i + 3])
    if completed > 0 then redis.call('HINCRBY', key, 'c ' .. queue, completed) end
    if failed > 0 then redis.call('HINCRBY', key, 'f ' .. queue, failed) end
    redis.call('PEXPIRE', key, minute + keep_ms + 60000 - NOW)
    redis.call('ZADD', K_THROUGHPUT_MINUTES, minute, ARGV[i])
  end
end
return 1
