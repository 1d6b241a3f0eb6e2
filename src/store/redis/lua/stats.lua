-- stats: jobs per queue and state (scheduled jobs already due count as ready), and the jobs that
-- completed or went dead within the recent window. Read only.
-- include: lib/prelude.lua, lib/namespace-check.lua
-- flags: allow-oom
-- KEYS, ARGV 1-4: the common layout (prelude.lua).
-- ARGV FIRST: the recent window (ms).
-- Returns: { queue, ready, scheduled, active, completed, dead, expired, recentCompleted, recentDead,
--   oldestReadyAt, ... } for every known queue (the store drops queues with no jobs); expired: the
--   dead jobs never started by their start deadline (the queue's expired set); oldestReadyAt: the
--   runAt of the oldest ready job (a due scheduled one included), -1 when none is ready.
-- Cost: a few O(log n) counts per queue, plus one HGET per active job (bounded by the workers'
--   concurrency) to count them per queue, and one ZCARD per group with ready jobs; the oldest ready
--   job takes one O(log n) read per priority in use, in the queue and in each group with ready jobs.
-- Counts entries: under eviction (prelude.lua), one whose job hash is gone is counted until a
--   claim, purge or retry meets it; an active one is not counted (its queue is unknown).
local since = NOW - tonumber(ARGV[FIRST])
local active = {}
for _, id in ipairs(redis.call('ZRANGE', K_ACTIVE, 0, -1)) do
  local queue = redis.call('HGET', P_JOB .. id, 'q')
  if queue then active[queue] = (active[queue] or 0) + 1 end
end
-- The runAt of a ready zset's oldest job, or of `oldest` if that is older (nil: none yet). Within a
-- priority (a score) members sort by runAt (prelude.lua, ready_member), so each priority's first
-- member is its oldest: one read per priority in use.
local function oldest_ready(key, oldest)
  local first = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
  while first[1] do
    local run_at = tonumber(string.sub(first[1], 1, 16))
    if oldest == nil or run_at < oldest then oldest = run_at end
    first = redis.call('ZRANGEBYSCORE', key, '(' .. first[2], '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
  end
  return oldest
end
-- A queue's grouped ready jobs (prelude.lua): its groups' zsets, a page of groups at a time; their
-- count, and the runAt of the oldest of them or of `oldest` if older.
local function grouped_ready(queue, oldest)
  local count, from = 0, '-'
  while true do
    local groups = redis.call('ZRANGEBYLEX', groups_key(queue), from, '+', 'LIMIT', 0, UNPACK_MAX)
    for _, group in ipairs(groups) do
      count = count + redis.call('ZCARD', group_ready_key(queue, group))
      oldest = oldest_ready(group_ready_key(queue, group), oldest)
    end
    if #groups < UNPACK_MAX then return count, oldest end
    from = '(' .. groups[#groups]
  end
end
-- A count over a queue's finished jobs of a state: those of its queue's zset and of its kept zset
-- (prelude.lua, add_finished), the second read only while any job has its own keepForMs.
local any_kept = redis.call('EXISTS', K_KEPT) == 1
local function finished_count(queue, state)
  return function(command, ...)
    local count = redis.call(command, finished_key(queue, state, false), ...)
    if any_kept then count = count + redis.call(command, kept_key(queue, state), ...) end
    return count
  end
end
local rows = {}
for _, queue in ipairs(redis.call('SMEMBERS', K_QUEUES)) do
  local scheduled = redis.call('ZCARD', P_SCHEDULED .. queue)
  local due = redis.call('ZCOUNT', P_SCHEDULED .. queue, '-inf', NOW)
  local completed, dead = finished_count(queue, 'completed'), finished_count(queue, 'dead')
  -- A due scheduled job is ready since its runAt, its score.
  local first_due = redis.call('ZRANGEBYSCORE', P_SCHEDULED .. queue, '-inf', NOW, 'WITHSCORES', 'LIMIT', 0, 1)
  local grouped, oldest = grouped_ready(queue, oldest_ready(P_READY .. queue, tonumber(first_due[2])))
  rows[#rows + 1] = queue
  rows[#rows + 1] = redis.call('ZCARD', P_READY .. queue) + grouped + due
  rows[#rows + 1] = scheduled - due
  rows[#rows + 1] = active[queue] or 0
  rows[#rows + 1] = completed('ZCARD')
  rows[#rows + 1] = dead('ZCARD')
  rows[#rows + 1] = redis.call('SCARD', P_EXPIRED .. queue)
  rows[#rows + 1] = completed('ZCOUNT', since, '+inf')
  rows[#rows + 1] = dead('ZCOUNT', since, '+inf')
  rows[#rows + 1] = oldest or -1
end
return rows
