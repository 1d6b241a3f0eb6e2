-- enqueue: inserts a batch of jobs atomically (one script, so one AOF write and one fsync with
-- appendfsync always). A job whose unique key is held returns the holder's id and writes nothing.
-- KEYS, ARGV 1-7: the common layout (prelude.lua).
-- ARGV FIRST..: two per job:
--   meta: 'queue,name,priority,runAt,delayMs,maxAttempts,timeoutMs,uniqueKey' (runAt and timeoutMs
--     '' for null; uniqueKey last, '' for none, and may itself hold commas)
--   payload: JSON text
-- Returns: { now, id1, created1 (1|0), id2, created2, ... } in input order.
-- Publishes: 'r<queue>' per queue given a ready job, 's<runAt> <queue>' per queue given a scheduled one.
local results = { NOW }
local known_queue = {}
for i = FIRST, #ARGV, 2 do
  local queue, name, priority, run_at, delay_ms, max_attempts, timeout_ms, unique_key =
    string.match(ARGV[i], '^([^,]*),([^,]*),([^,]*),([^,]*),([^,]*),([^,]*),([^,]*),(.*)$')
  local holder = unique_key ~= '' and redis.call('HGET', K_UNIQUE, unique_key)
  if holder then
    results[#results + 1] = holder
    results[#results + 1] = 0
  else
    local id = string.format('%d', redis.call('INCR', K_ID))
    local at = run_at ~= '' and tonumber(run_at) or NOW + tonumber(delay_ms)
    local key = P_JOB .. id
    local ready = at <= NOW
    redis.call('HSET', key, 'id', id, 'q', queue, 'n', name, 'p', ARGV[i + 1], 's', ready and 'ready' or 'scheduled',
      'pr', priority, 'ra', at, 'a', 0, 'ma', max_attempts, 'c', NOW, 'u', NOW)
    if timeout_ms ~= '' then redis.call('HSET', key, 'to', timeout_ms) end
    if unique_key ~= '' then
      redis.call('HSET', key, 'uk', unique_key)
      redis.call('HSET', K_UNIQUE, unique_key, id)
    end
    redis.call('ZADD', K_JOBS, id, id)
    if ready then add_ready(queue, priority, at, id) else add_scheduled(queue, at, id) end
    if not known_queue[queue] then
      known_queue[queue] = true
      redis.call('SADD', K_QUEUES, queue)
    end
    results[#results + 1] = id
    results[#results + 1] = 1
  end
end
publish_wakes()
return results
