-- unwait: ends waiters' registrations (wait-check.lua): a wait that ended without a delivery, or
-- every waiter of a store that is closing. Not persisted nor replicated (deliver.lua).
-- KEYS, ARGV 1-7: the common layout (prelude.lua).
-- ARGV FIRST..: the waiter ids.
-- Returns: how many were still registered (one that was not may have a delivery on its way).
redis.set_repl(redis.REPL_NONE)
return redis.call('HDEL', K_WAITERS, unpack(ARGV, FIRST))
