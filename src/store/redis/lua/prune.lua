-- prune: one batch of finished jobs past their retention, deleted as purge deletes them
-- (delete_finished, prelude.lua), at most `limit`: first the jobs whose own keepForMs ran out,
-- earliest first, then each queue's jobs past its age or beyond its count, oldest first, state by
-- state, queue by queue: the steps and order of kernel/retention.ts pruneBatch, which the SQL
-- stores run. A queue's retention is its control hash's keep_* fields (control.lua), each absent
-- for its default: the ages come as arguments (kernel RETENTION_DEFAULTS), and no count limit.
-- include: lib/prelude.lua, lib/namespace-check.lua
-- flags: allow-oom
-- KEYS, ARGV 1-4: the common layout (prelude.lua).
-- ARGV FIRST: limit; FIRST + 1, FIRST + 2: the default ages (ms) of completed and dead jobs.
-- Returns: { how many jobs were deleted, how many entries were looked at } (the store says `more`
--   when the second is `limit`): an entry whose job hash is gone (evicted) is dropped, and is no
--   job deleted.
-- Uses: the kept zset (a range from its start); per queue and state, its finished zset (ZCOUNT of
--   the range past its age, ZCARD for a count limit, then a rank range from its oldest): O(log n)
--   per queue plus O(log n) per job deleted, whatever the number of jobs kept; one HMGET of the
--   control hash of a queue with a setting.
local limit = tonumber(ARGV[FIRST])
local default_ms = { completed = tonumber(ARGV[FIRST + 1]), dead = tonumber(ARGV[FIRST + 2]) }
local deleted, looked = 0, 0

for _, id in ipairs(redis.call('ZRANGEBYSCORE', K_KEPT, '-inf', NOW, 'LIMIT', 0, limit)) do
  local job = redis.call('HMGET', P_JOB .. id, 'q', 's')
  if job[2] == 'completed' or job[2] == 'dead' then
    deleted = deleted + delete_finished(id, job[1], job[2], true)
  else
    -- Its hash is gone (evicted): the entry goes with what is left of it.
    redis.call('ZREM', K_KEPT, id)
    forget_job(id)
  end
  looked = looked + 1
end

local queues = redis.call('SMEMBERS', K_QUEUES)
table.sort(queues)
local controlled = redis.call('EXISTS', K_QUEUE_CONTROLS) == 1
-- A queue's own ages and counts ({ completed = { ms, count }, dead = { ... } }; nil: none set).
local function retention_of(queue)
  if not controlled or redis.call('SISMEMBER', K_QUEUE_CONTROLS, queue) == 0 then return nil end
  local keep = redis.call('HMGET', P_QUEUE_CONTROL .. queue, 'keep_completed_ms', 'keep_dead_ms',
    'keep_completed_count', 'keep_dead_count')
  return { completed = { tonumber(keep[1]), tonumber(keep[3]) }, dead = { tonumber(keep[2]), tonumber(keep[4]) } }
end
local retentions = {}
for _, queue in ipairs(queues) do retentions[queue] = retention_of(queue) or false end

for _, state in ipairs({ 'completed', 'dead' }) do
  for _, queue in ipairs(queues) do
    if looked >= limit then break end
    local own = retentions[queue] and retentions[queue][state] or {}
    local keep_ms, keep_count = own[1] or default_ms[state], own[2]
    local finished = finished_key(queue, state, false)
    -- How many of the oldest go: those past the age (-1: forever), or beyond the count if more.
    local take = 0
    if keep_ms ~= -1 then take = redis.call('ZCOUNT', finished, '-inf', string.format('%d', NOW - keep_ms)) end
    if keep_count then take = math.max(take, redis.call('ZCARD', finished) - keep_count) end
    take = math.min(take, limit - looked)
    if take > 0 then
      for _, id in ipairs(redis.call('ZRANGE', finished, 0, take - 1)) do
        deleted = deleted + delete_finished(id, queue, state, false)
        looked = looked + 1
      end
    end
  end
end
return { deleted, looked }
