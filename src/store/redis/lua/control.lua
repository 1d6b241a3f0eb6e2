-- control: the workers' control record, after the change asked for, in one step: a stop request
-- (every running worker asked to stop gracefully, and the waiting ones woken), and at most one
-- queue change (pause, resume, limit: store.ts ControlParams, as src/store/kernel/queue-control.ts
-- queueRowAfter has it). Workers compare the stop time with the one they saw at start, so it must
-- change with every request, even from a host whose clock is behind: it moves to now or 1 ms past
-- the previous request. A queue's settings are its queue control hash, listed in the queue
-- controls set (prelude.lua); a queue left without any loses both. A queue that gets a
-- concurrency limit has the leases of its active jobs gathered into its leases zset (one look at
-- every active job, in pages), and one that loses it has them dropped: from then on the scripts
-- that take, move and end leases keep that zset (prelude.lua, track_lease).
-- A plain read (no stop request, no change) writes nothing and, like the GET it replaces, does not
-- check the namespace's instance marker: a process reads it to tell its connection is back.
-- include: lib/prelude.lua
-- flags: allow-oom
-- KEYS, ARGV 1-4: the common layout (prelude.lua).
-- ARGV FIRST: '1' to request a stop, else ''; FIRST + 1: the queue change, '' | 'pause' | 'resume'
--   | 'limit'; FIRST + 2: its queue; FIRST + 3: '1' when the change may free work for the queue's
--   waiters (changeFreesWork); then, for 'pause': by and reason, each '' for none or '=' then the
--   text; for 'limit': the concurrency limit, '' for none.
-- Returns: { the stop time (text) or nil, { per queue with a setting: queue, paused_at, paused_by,
--   pause_reason, concurrency (nil where absent) ... } } (the store sorts them by name).
-- Publishes: 'x' on a stop request (wake every waiter); 'r<queue>' when the change may free work,
--   unless the queue still cannot give any (publish_wakes, prelude.lua).
local request_stop, change, queue = ARGV[FIRST] == '1', ARGV[FIRST + 1], ARGV[FIRST + 2]
if request_stop or change ~= '' then
  local lost = namespace_lost()
  if lost then return lost end
end

-- Optional text as the store sends it: '' for none, else '=' then the text.
local function optional(arg)
  if arg == '' then return nil end
  return string.sub(arg, 2)
end

-- Takes the leases of the queue's active jobs into its leases zset: they count from now on.
local function track_queue_leases(leases_of)
  local start = 0
  while true do
    local page = redis.call('ZRANGE', K_ACTIVE, start, start + UNPACK_MAX - 1)
    if #page == 0 then break end
    for _, id in ipairs(page) do
      local key = P_JOB .. id
      local job = redis.call('HMGET', key, 's', 'q', 'le')
      if job[1] == 'active' and job[2] == leases_of and job[3] then track_lease(key, leases_of, id, job[3]) end
    end
    start = start + UNPACK_MAX
  end
end

local function untrack_queue_leases(leases_of)
  local leases = P_LEASES .. leases_of
  while true do
    local page = redis.call('ZRANGE', leases, 0, UNPACK_MAX - 1)
    if #page == 0 then break end
    for _, id in ipairs(page) do redis.call('HDEL', P_JOB .. id, 'lq') end
    redis.call('ZREM', leases, unpack(page))
  end
end

local stop
if request_stop then
  local previous = tonumber(redis.call('GET', K_STOP))
  local at = NOW
  if previous and previous + 1 > at then at = previous + 1 end
  stop = string.format('%d', at)
  redis.call('SET', K_STOP, stop)
  redis.call('SPUBLISH', CHANNEL, 'x')
else
  stop = redis.call('GET', K_STOP)
end

if change ~= '' then
  local key = P_QUEUE_CONTROL .. queue
  local had_limit = redis.call('HEXISTS', key, 'concurrency') == 1
  if change == 'pause' then
    local by, reason = optional(ARGV[FIRST + 4]), optional(ARGV[FIRST + 5])
    redis.call('HSET', key, 'paused_at', string.format('%d', NOW))
    if by then redis.call('HSET', key, 'paused_by', by) else redis.call('HDEL', key, 'paused_by') end
    if reason then redis.call('HSET', key, 'pause_reason', reason) else redis.call('HDEL', key, 'pause_reason') end
  elseif change == 'resume' then
    redis.call('HDEL', key, 'paused_at', 'paused_by', 'pause_reason')
  elseif ARGV[FIRST + 4] == '' then
    redis.call('HDEL', key, 'concurrency')
  else
    redis.call('HSET', key, 'concurrency', ARGV[FIRST + 4])
  end
  local setting = redis.call('HMGET', key, 'paused_at', 'concurrency')
  if setting[1] or setting[2] then
    redis.call('SADD', K_QUEUE_CONTROLS, queue)
  else
    redis.call('DEL', key)
    redis.call('SREM', K_QUEUE_CONTROLS, queue)
  end
  if setting[2] and not had_limit then
    track_queue_leases(queue)
  elseif had_limit and not setting[2] then
    untrack_queue_leases(queue)
  end
  if ARGV[FIRST + 3] == '1' then
    wake_ready(queue)
    publish_wakes()
  end
end

local rows = {}
for _, name in ipairs(redis.call('SMEMBERS', K_QUEUE_CONTROLS)) do
  local setting = redis.call('HMGET', P_QUEUE_CONTROL .. name, 'paused_at', 'paused_by', 'pause_reason', 'concurrency')
  -- Under an eviction policy a hash may be gone while the set still names it: no setting, no row.
  if setting[1] or setting[4] then
    rows[#rows + 1] = name
    for n = 1, 4 do rows[#rows + 1] = setting[n] end
  end
end
return { stop, rows }
