-- waitForWork with a claim, at its end: ends waiters' registrations (wait-for-work.lua): a wait that ended without a delivery, or
-- every waiter of a store that is closing. Not persisted nor replicated (deliver.lua).
-- include: lib/prelude.lua, lib/namespace-check.lua
-- flags: allow-oom
-- KEYS, ARGV 1-4: the common layout (prelude.lua).
-- ARGV FIRST..: the waiter ids.
-- Returns: how many were still registered (one that was not may have a delivery on its way).
redis.set_repl(redis.REPL_NONE)
local count = 0
for first = FIRST, #ARGV, UNPACK_MAX do
  count = count + redis.call('HDEL', K_WAITERS, unpack(ARGV, first, math.min(first + UNPACK_MAX - 1, #ARGV)))
end
return count
