-- claim: takes up to `limit` jobs across the named queues and leases them (lib/claim-core.lua).
-- include: lib/prelude.lua, lib/namespace-check.lua, lib/groups.lua, lib/claim-core.lua
-- flags: allow-oom
-- KEYS, ARGV 1-4: the common layout (prelude.lua).
-- ARGV FIRST..: claim_args's (lib/claim-core.lua).
-- Returns: { now, job1, job2, ... }, each job as job_reply gives it (prelude.lua), in claim order.
local claimed = claim_jobs(claim_args(FIRST))
table.insert(claimed, 1, NOW)
return claimed
