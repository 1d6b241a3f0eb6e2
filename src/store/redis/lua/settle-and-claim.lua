-- settleAndClaim: settle.lua, then claim.lua, in one script: a busy worker's usual step costs one
-- round trip and one AOF write. Composed after settle.lua and claim.lua (their functions).
-- KEYS, ARGV 1-9: the common layout (prelude.lua).
-- ARGV FIRST..: settle.lua's arguments, then claim.lua's.
-- Returns: { now, settle results (as settle.lua), job1, job2, ... (as claim.lua) }.
local settled, next_arg = settle_items(FIRST)
local claimed = claim_jobs(claim_args(next_arg))
publish_wakes()
table.insert(claimed, 1, settled)
table.insert(claimed, 1, NOW)
return claimed
