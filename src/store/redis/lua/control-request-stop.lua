-- control with requestStop: asks every running worker to stop gracefully, and wakes the waiting ones. Workers
-- compare the value with the one they saw at start, so it must change with every request, even
-- from a host whose clock is behind: it moves to now or 1 ms past the previous request.
-- include: lib/prelude.lua, lib/namespace-check.lua
-- flags: allow-oom
-- KEYS, ARGV 1-4: the common layout (prelude.lua).
-- Returns: the new stop time. Publishes: 'x' (wake every waiter).
local previous = tonumber(redis.call('GET', K_STOP))
local at = NOW
if previous and previous + 1 > at then at = previous + 1 end
redis.call('SET', K_STOP, string.format('%d', at))
redis.call('SPUBLISH', CHANNEL, 'x')
return at
