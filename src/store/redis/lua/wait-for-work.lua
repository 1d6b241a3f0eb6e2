-- waitForWork: run once the waiter is subscribed. Is work waiting on these queues already (a ready
-- job, or a scheduled one that is due)? Else, when is the next scheduled job of these queues due?
-- And if the wait has a claim, registers the waiter for deliveries (deliver.lua), in the
-- same step, so nothing enqueued between the check and the registration goes unseen.
-- include: lib/prelude.lua, lib/namespace-check.lua
-- flags: allow-oom
-- KEYS, ARGV 1-4: the common layout (prelude.lua).
-- ARGV FIRST: the waiter id, or '' for none; FIRST + 1: its registration (JSON, deliver.lua) or '';
--   FIRST + 2: the names count (0: every name), then the names (WaitParams.names: only ready jobs
--   of these count, one ZCARD of each name's ready zset per queue), then the queues.
-- Returns: { now, 1 if work is waiting else 0, the earliest runAt of a scheduled job or '', the
--   stop key (the store compares it with the last it knew of, to catch a stop request) }.
-- A due scheduled job counts whatever its name: the waiter's claim promotes it, so it is due once.
-- The jobs of a queue the waiter's claim could take none of (paused, or at its concurrency limit:
-- queue_room, prelude.lua) do not count, else the waiter would be woken at once, again and again.
-- What frees such a queue wakes its waiters (control.lua, settle-core.lua); a limited queue's
-- earliest live lease counts as its next due time instead, since a lease that runs out frees room
-- without any script being told.
local stop = redis.call('GET', K_STOP)
local next_due = nil
local function due(at)
  if next_due == nil or at < next_due then next_due = at end
end
local name_count = tonumber(ARGV[FIRST + 2])
local names_at = FIRST + 3
local queues = {}
for i = names_at + name_count, #ARGV do queues[#queues + 1] = ARGV[i] end
local controlled = smismember(K_QUEUE_CONTROLS, queues)
for q, queue in ipairs(queues) do
  local room, limited
  if controlled[q] == 1 then room, limited = queue_room(queue) end
  if room == 0 then
    if limited and redis.call('EXISTS', P_READY .. queue, P_SCHEDULED .. queue) > 0 then
      local first = redis.call('ZRANGEBYSCORE', P_LEASES .. queue, '(' .. string.format('%d', NOW), '+inf',
        'WITHSCORES', 'LIMIT', 0, 1)
      if first[2] then due(tonumber(first[2])) end
    end
  else
    if name_count == 0 then
      if redis.call('ZCARD', P_READY .. queue) > 0 then return { NOW, 1, '', stop } end
    else
      for n = names_at, names_at + name_count - 1 do
        if redis.call('ZCARD', ready_name_key(queue, ARGV[n])) > 0 then return { NOW, 1, '', stop } end
      end
    end
    local first = redis.call('ZRANGE', P_SCHEDULED .. queue, 0, 0, 'WITHSCORES')
    if first[2] then
      local at = tonumber(first[2])
      if at <= NOW then return { NOW, 1, '', stop } end
      due(at)
    end
  end
end
if ARGV[FIRST] ~= '' then
  redis.set_repl(redis.REPL_NONE)
  redis.call('HSET', K_WAITERS, ARGV[FIRST], ARGV[FIRST + 1])
end
return { NOW, 0, next_due and string.format('%d', next_due) or '', stop }
