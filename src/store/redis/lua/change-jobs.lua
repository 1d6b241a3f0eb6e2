-- change-jobs: changeJobs, each change one change_job (lib/change-job.lua), all in one script.
-- include: lib/prelude.lua, lib/change-job.lua, lib/namespace-check.lua
-- (No allow-oom flag: a new payload may be larger than the old, as an enqueue adds.)
-- KEYS, ARGV 1-4: the common layout (prelude.lua).
-- ARGV FIRST..: five per change: the job id, then its priority, run time (epoch ms), payload (JSON
--   text) and maxAttempts, '' for a field that keeps the job's ('' is no JSON text, so a payload is
--   never mistaken for it). The store sends only ids of a valid form (redis-encoding.ts isJobId).
-- Publishes: 'r<queue>' where a job became ready, 's<runAt> <queue>' for the earliest job a change
--   made wait (publish_wakes, prelude.lua).
-- Returns: one result per change, in order: 'ok', 'not_found' or 'not_changeable'.
local function given(value)
  if value == '' then return nil end
  return value
end
local results = {}
for i = FIRST, #ARGV, 5 do
  results[#results + 1] =
    change_job(ARGV[i], given(ARGV[i + 1]), given(ARGV[i + 2]), given(ARGV[i + 3]), given(ARGV[i + 4]))
end
publish_wakes()
return results
