-- cancel: a job that has not finished ends as dead. An active job's lease is revoked, so its
-- worker's next renew or settle reports lease lost.
-- include: lib/prelude.lua, lib/namespace-check.lua
-- flags: allow-oom
-- KEYS, ARGV 1-4: the common layout (prelude.lua).
-- ARGV FIRST: the error JSON to store; then the ids.
-- A ready or scheduled job with a start deadline ('x') leaves the deadlines zset (prelude.lua); a
--   cancelled job is not counted as expired, whatever its deadline.
-- Publishes: 'r<queue>' for a queue with a concurrency or group concurrency limit that a
--   cancelled active job makes room in (untrack_lease, prelude.lua).
-- A cancelled job frees its unique key if its mode says so (free_unique_key_at_end, prelude.lua).
-- Returns: how many jobs were cancelled. An id whose hash is gone (evicted) counts as no job; it
--   leaves the jobs index and the active zset (forget_job, prelude.lua).
local count = 0
for i = FIRST + 1, #ARGV do
  local id, key = ARGV[i], P_JOB .. ARGV[i]
  local job = redis.call('HMGET', key, 's', 'q', 'pr', 'ra', 'n', 'lq', 'x', 'g', 'lg', 'k')
  local state, queue = job[1], job[2]
  local was_open = true
  if not queue then
    redis.call('ZREM', K_ACTIVE, id)
    forget_job(id)
    was_open = false
  elseif state == 'scheduled' then
    redis.call('ZREM', P_SCHEDULED .. queue, id)
    if redis.call('ZCARD', P_SCHEDULED .. queue) == 0 then redis.call('SREM', K_HAS_SCHEDULED, queue) end
    if job[7] then untrack_deadline(id) end
  elseif state == 'ready' then
    remove_ready(queue, job[5], ready_member(job[4], id), job[8] or nil)
    unflag_ready_if_empty(queue)
    if job[7] then untrack_deadline(id) end
  elseif state == 'active' then
    redis.call('ZREM', K_ACTIVE, id)
    if job[6] then untrack_lease(key, queue, id) end
    if job[9] then untrack_group_lease(key, queue, job[8], id) end
  else
    was_open = false
  end
  if was_open then
    redis.call('HDEL', key, 'lt', 'le', 'w', 'dv')
    redis.call('HSET', key, 's', 'dead', 'e', ARGV[FIRST], 'f', NOW, 'u', NOW)
    free_unique_key_at_end(key, id)
    add_finished(queue, id, 'dead', job[10])
    count = count + 1
  end
end
publish_wakes()
return count
