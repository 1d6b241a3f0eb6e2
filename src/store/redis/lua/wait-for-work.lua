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
local stop = redis.call('GET', K_STOP)
local next_due = nil
local name_count = tonumber(ARGV[FIRST + 2])
local names_at = FIRST + 3
for i = names_at + name_count, #ARGV do
  if name_count == 0 then
    if redis.call('ZCARD', P_READY .. ARGV[i]) > 0 then return { NOW, 1, '', stop } end
  else
    for n = names_at, names_at + name_count - 1 do
      if redis.call('ZCARD', ready_name_key(ARGV[i], ARGV[n])) > 0 then return { NOW, 1, '', stop } end
    end
  end
  local first = redis.call('ZRANGE', P_SCHEDULED .. ARGV[i], 0, 0, 'WITHSCORES')
  if first[2] then
    local at = tonumber(first[2])
    if at <= NOW then return { NOW, 1, '', stop } end
    if next_due == nil or at < next_due then next_due = at end
  end
end
if ARGV[FIRST] ~= '' then
  redis.set_repl(redis.REPL_NONE)
  redis.call('HSET', K_WAITERS, ARGV[FIRST], ARGV[FIRST + 1])
end
return { NOW, 0, next_due and string.format('%d', next_due) or '', stop }
