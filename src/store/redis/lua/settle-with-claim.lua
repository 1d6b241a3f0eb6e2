-- settle with a claim: settle_items, then claim_jobs, in one script: a busy worker's usual step costs one
-- round trip and one AOF write.
-- include: lib/prelude.lua, lib/namespace-check.lua, lib/settle-core.lua, lib/groups.lua, lib/claim-core.lua
-- flags: allow-oom
-- KEYS, ARGV 1-4: the common layout (prelude.lua).
-- ARGV FIRST..: settle_items's arguments (lib/settle-core.lua), then claim_args's (lib/claim-core.lua).
-- Returns: { now, settle results (as settle.lua), job1, job2, ... (as claim.lua) }.
local settled, next_arg = settle_items(FIRST)
local claimed = claim_jobs(claim_args(next_arg))
publish_wakes()
table.insert(claimed, 1, settled)
table.insert(claimed, 1, NOW)
return claimed
