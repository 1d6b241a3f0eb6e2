-- unwait: ends a waiter's registration (wait-check.lua) when its wait ended without a delivery.
-- Not persisted nor replicated (deliver.lua).
-- KEYS, ARGV 1-7: the common layout (prelude.lua).
-- ARGV FIRST: the waiter id.
-- Returns: 1 if it was still registered, 0 if not (a delivery to it may be on its way).
redis.set_repl(redis.REPL_NONE)
return redis.call('HDEL', K_WAITERS, ARGV[FIRST])
