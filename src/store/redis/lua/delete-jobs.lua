-- deleteJobs: deletes the jobs given that are not active (their worker holds them: cancel first),
-- taking each out of every zset and set it is in, as cancel takes a job out of line and purge
-- deletes a finished one (delete_finished, prelude.lua). A deleted job frees its unique key.
-- include: lib/prelude.lua, lib/namespace-check.lua
-- flags: allow-oom
-- KEYS, ARGV 1-4: the common layout (prelude.lua).
-- ARGV FIRST..: the ids.
-- Returns: how many jobs were deleted. An id whose hash is gone (evicted) counts as no job; it
--   leaves the jobs index (forget_job, prelude.lua).
local count = 0
for i = FIRST, #ARGV do
  local id, key = ARGV[i], P_JOB .. ARGV[i]
  local job = redis.call('HMGET', key, 's', 'q', 'ra', 'n', 'x', 'g', 'k', 'uk')
  local state, queue = job[1], job[2]
  if not queue then
    forget_job(id)
  elseif state == 'completed' or state == 'dead' then
    count = count + delete_finished(id, queue, state, job[7])
  elseif state ~= 'active' then
    if state == 'scheduled' then
      redis.call('ZREM', P_SCHEDULED .. queue, id)
      if redis.call('ZCARD', P_SCHEDULED .. queue) == 0 then redis.call('SREM', K_HAS_SCHEDULED, queue) end
    else
      remove_ready(queue, job[4], ready_member(job[3], id), job[6] or nil)
      unflag_ready_if_empty(queue)
    end
    if job[5] then untrack_deadline(id) end
    if job[8] then free_unique_key(id, job[8]) end
    forget_job(id)
    count = count + 1
  end
end
return count
