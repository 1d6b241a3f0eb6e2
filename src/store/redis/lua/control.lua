-- control: the workers' control record, after the change asked for, in one step: a stop request
-- (every running worker asked to stop gracefully, and the waiting ones woken), and at most one
-- queue change (pause, resume, limit, retention: store.ts ControlParams, as src/store/kernel/queue-control.ts
-- queueRowAfter has it). Workers compare the stop time with the one they saw at start, so it must
-- change with every request, even from a host whose clock is behind: it moves to now or 1 ms past
-- the previous request. A queue's settings are its queue control hash, listed in the queue
-- controls set (prelude.lua); a queue left without any loses both. A queue that gets a
-- concurrency limit has the leases of its active jobs gathered into its leases zset, and one that
-- gets a group concurrency limit those of its active jobs with a group into their groups' (one
-- look at every active job, in pages); one that loses either has them dropped: from then on the
-- scripts that take, move and end leases keep those zsets (prelude.lua, track_lease,
-- track_group_lease). A queue left without a rate and a group rate loses its logs of starts
-- (prelude.lua, window_room) and its rate_opens_at (claim-core.lua).
-- A plain read (no stop request, no change) writes nothing and, like the GET it replaces, does not
-- check the namespace's instance marker: a process reads it to tell its connection is back.
-- include: lib/prelude.lua
-- flags: allow-oom
-- KEYS, ARGV 1-4: the common layout (prelude.lua).
-- ARGV FIRST: '1' to request a stop, else ''; FIRST + 1: the queue change, '' | 'pause' | 'resume'
--   | 'limit' | 'retention'; FIRST + 2: its queue; FIRST + 3: '1' when the change may free work for
--   the queue's waiters (changeFreesWork); then, for 'pause': by and reason, each '' for none or
--   '=' then the text; for 'limit' ('retention'): '1' to clear every limit (retention setting),
--   else '', then one value per field of LIMIT_FIELDS (RETENTION_FIELDS, below), each '' to leave
--   it as it is, '-' to remove it, else the number (an age of -1: forever).
-- Returns: { the stop time (text) or nil, { per queue with a setting: queue, then its SETTINGS
--   (nil where absent) ... }, the store's schedules version (text) or nil before the first change
--   (schedules.lua) } (the store sorts the queues by name).
-- Publishes: 'x' on a stop request (wake every waiter); 'r<queue>' when the change may free work,
--   unless the queue still cannot give any (publish_wakes, prelude.lua).
local request_stop, change, queue = ARGV[FIRST] == '1', ARGV[FIRST + 1], ARGV[FIRST + 2]
if request_stop or change ~= '' then
  local lost = namespace_lost()
  if lost then return lost end
end

-- A queue's limits, as the hash's fields (a rate is two: its limit and its window).
local LIMIT_FIELDS = { 'concurrency', 'rate_limit', 'rate_per_ms', 'group_concurrency', 'group_rate_limit',
  'group_rate_per_ms' }
-- A queue's retention (prune.lua reads it), each field absent for its default.
local RETENTION_FIELDS = { 'keep_completed_ms', 'keep_dead_ms', 'keep_completed_count', 'keep_dead_count' }
-- Every setting, in the order of the reply's rows (after the queue): kernel/queue-control.ts
-- QUEUE_CONTROL_COLUMNS.
local SETTINGS = { 'paused_at', 'paused_by', 'pause_reason', 'concurrency', 'rate_limit', 'rate_per_ms',
  'group_concurrency', 'group_rate_limit', 'group_rate_per_ms', 'keep_completed_ms', 'keep_dead_ms',
  'keep_completed_count', 'keep_dead_count' }

-- Optional text as the store sends it: '' for none, else '=' then the text.
local function optional(arg)
  if arg == '' then return nil end
  return string.sub(arg, 2)
end

-- Whether a row of SETTINGS holds any setting (a pause's by and reason come with its time).
local function has_setting(row)
  for n = 4, #SETTINGS do
    if row[n] then return true end
  end
  return row[1]
end

-- Takes the leases of the queue's active jobs into its leases zset (`all`) and those of its
-- active jobs with a group into their groups' (`grouped`): they count from now on.
local function track_queue_leases(leases_of, all, grouped)
  local start = 0
  while true do
    local page = redis.call('ZRANGE', K_ACTIVE, start, start + UNPACK_MAX - 1)
    if #page == 0 then break end
    for _, id in ipairs(page) do
      local key = P_JOB .. id
      local job = redis.call('HMGET', key, 's', 'q', 'le', 'g')
      if job[1] == 'active' and job[2] == leases_of and job[3] then
        if all then track_lease(key, leases_of, id, job[3]) end
        if grouped and job[4] then track_group_lease(key, leases_of, job[4], id, job[3]) end
      end
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

-- The groups' leases zsets are found through the active jobs marked 'lg' (one look at each).
local function untrack_group_leases(leases_of)
  local start = 0
  while true do
    local page = redis.call('ZRANGE', K_ACTIVE, start, start + UNPACK_MAX - 1)
    if #page == 0 then break end
    for _, id in ipairs(page) do
      local key = P_JOB .. id
      local job = redis.call('HMGET', key, 'q', 'g', 'lg')
      if job[1] == leases_of and job[3] then
        if job[2] then redis.call('ZREM', group_leases_key(leases_of, job[2]), id) end
        redis.call('HDEL', key, 'lg')
      end
    end
    start = start + UNPACK_MAX
  end
end

local function delete_start_logs(logs_of)
  redis.call('DEL', P_STARTS .. logs_of)
  local index = P_START_GROUPS .. logs_of
  while true do
    local page = redis.call('ZRANGE', index, 0, UNPACK_MAX - 1)
    if #page == 0 then break end
    for _, group in ipairs(page) do redis.call('DEL', group_starts_key(logs_of, group)) end
    redis.call('ZREM', index, unpack(page))
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
  local before = redis.call('HMGET', key, unpack(SETTINGS))
  if change == 'pause' then
    local by, reason = optional(ARGV[FIRST + 4]), optional(ARGV[FIRST + 5])
    redis.call('HSET', key, 'paused_at', string.format('%d', NOW))
    if by then redis.call('HSET', key, 'paused_by', by) else redis.call('HDEL', key, 'paused_by') end
    if reason then redis.call('HSET', key, 'pause_reason', reason) else redis.call('HDEL', key, 'pause_reason') end
  elseif change == 'resume' then
    redis.call('HDEL', key, 'paused_at', 'paused_by', 'pause_reason')
  else
    local clear = ARGV[FIRST + 4] == '1'
    for n, field in ipairs(change == 'limit' and LIMIT_FIELDS or RETENTION_FIELDS) do
      local value = clear and '-' or ARGV[FIRST + 4 + n]
      if value == '-' then
        redis.call('HDEL', key, field)
      elseif value ~= '' then
        redis.call('HSET', key, field, value)
      end
    end
  end
  local after = redis.call('HMGET', key, unpack(SETTINGS))
  if has_setting(after) then
    redis.call('SADD', K_QUEUE_CONTROLS, queue)
  else
    redis.call('DEL', key)
    redis.call('SREM', K_QUEUE_CONTROLS, queue)
  end
  -- Concurrency (4) and group concurrency (7): their leases zsets.
  local track_all, track_grouped = after[4] and not before[4], after[7] and not before[7]
  if track_all or track_grouped then track_queue_leases(queue, track_all, track_grouped) end
  if before[4] and not after[4] then untrack_queue_leases(queue) end
  if before[7] and not after[7] then untrack_group_leases(queue) end
  -- Rate (5) and group rate (8): their logs, kept while either is set.
  if (before[5] or before[8]) and not (after[5] or after[8]) then
    delete_start_logs(queue)
    redis.call('HDEL', key, 'rate_opens_at')
  end
  if ARGV[FIRST + 3] == '1' then
    wake_ready(queue)
    publish_wakes()
  end
end

local rows = {}
for _, name in ipairs(redis.call('SMEMBERS', K_QUEUE_CONTROLS)) do
  local setting = redis.call('HMGET', P_QUEUE_CONTROL .. name, unpack(SETTINGS))
  -- Under an eviction policy a hash may be gone while the set still names it: no setting, no row.
  if has_setting(setting) then
    rows[#rows + 1] = name
    for n = 1, #SETTINGS do rows[#rows + 1] = setting[n] end
  end
end
return { stop, rows, redis.call('GET', K_SCHEDULES_VERSION) }
