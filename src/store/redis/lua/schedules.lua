-- schedules: changes schedules as asked, then reads them all, in one step (store.ts schedules()).
-- A schedule is a hash of kernel/schedules.ts's columns (prelude.lua, P_SCHEDULE) listed in the
-- schedules zset. The rules are scheduleRowAfter's, applied here rather than to rows the store
-- read beforehand: a compare-and-set of rows read in another call would need a retry loop, and a
-- fire in between (which moves last_slot without a version) would be lost by a whole-row write.
-- tests/conformance/store/schedules.ts holds both to the same cases.
--   put: a new schedule starts at now, version 1, not paused; an existing one whose definition
--     (cron, time_zone, job, missed, overlap) differs takes it, its version + 1; an equal one is
--     left as it is
--   remove: deleted; pause: paused at now, version + 1, unless paused; resume: not paused, its
--     last_slot moved up to now (the slots missed are passed over), version + 1, unless running
--   Every change sets updated_at; ids of no schedule are ignored. Only a change that changed
--   something moves the store's schedules version (INCR) and wakes every waiter ('v' on the wake
--   channel: redis-waiting.ts), so that the schedulers of every process reload.
-- include: lib/prelude.lua, lib/namespace-check.lua
-- flags: allow-oom
-- (A few small hashes at most: a scheduler reads the schedules on a full Redis as a worker reads its
-- control record, and a worker starts there with the schedules it always had.)
-- KEYS, ARGV 1-4: the common layout (prelude.lua).
-- ARGV FIRST..: the changes, in the order they apply (kernel/schedules.ts scheduleChanges): 'put',
--   the id, then the definition's cron, time_zone, job (JSON text), missed and overlap, as
--   definitionColumns has them; or 'remove', 'pause' or 'resume', then the id.
-- Returns: { the store's schedules version (0 before the first change), then per schedule, by id,
--   its hash's fields and values (HGETALL) }.
local now_text = string.format('%d', NOW)
local changed = false
local i = FIRST
while i <= #ARGV do
  local change, id = ARGV[i], ARGV[i + 1]
  local key = P_SCHEDULE .. id
  if change == 'put' then
    local row = redis.call('HMGET', key, 'cron', 'time_zone', 'job', 'missed', 'overlap')
    if not row[1] then
      redis.call('HSET', key, 'id', id, 'cron', ARGV[i + 2], 'time_zone', ARGV[i + 3], 'job', ARGV[i + 4],
        'missed', ARGV[i + 5], 'overlap', ARGV[i + 6], 'last_slot', now_text, 'version', '1', 'created_at', now_text,
        'updated_at', now_text)
      redis.call('ZADD', K_SCHEDULES, '0', id)
      changed = true
    elseif row[1] ~= ARGV[i + 2] or row[2] ~= ARGV[i + 3] or row[3] ~= ARGV[i + 4] or row[4] ~= ARGV[i + 5]
      or row[5] ~= ARGV[i + 6] then
      redis.call('HSET', key, 'cron', ARGV[i + 2], 'time_zone', ARGV[i + 3], 'job', ARGV[i + 4], 'missed',
        ARGV[i + 5], 'overlap', ARGV[i + 6], 'updated_at', now_text)
      redis.call('HINCRBY', key, 'version', 1)
      changed = true
    end
    i = i + 7
  else
    local row = redis.call('HMGET', key, 'id', 'paused_at', 'last_slot')
    if not row[1] then
      -- No such schedule: nothing to change.
    elseif change == 'remove' then
      redis.call('DEL', key)
      redis.call('ZREM', K_SCHEDULES, id)
      changed = true
    elseif change == 'pause' and not row[2] then
      redis.call('HSET', key, 'paused_at', now_text, 'updated_at', now_text)
      redis.call('HINCRBY', key, 'version', 1)
      changed = true
    elseif change == 'resume' and row[2] then
      redis.call('HDEL', key, 'paused_at')
      redis.call('HSET', key, 'last_slot', string.format('%d', math.max(tonumber(row[3]), NOW)), 'updated_at',
        now_text)
      redis.call('HINCRBY', key, 'version', 1)
      changed = true
    end
    i = i + 2
  end
end
if changed then
  redis.call('INCR', K_SCHEDULES_VERSION)
  redis.call('SPUBLISH', CHANNEL, 'v')
end

local reply = { tonumber(redis.call('GET', K_SCHEDULES_VERSION) or '0') }
for _, id in ipairs(redis.call('ZRANGE', K_SCHEDULES, 0, -1)) do
  local row = redis.call('HGETALL', P_SCHEDULE .. id)
  -- Under an eviction policy a hash may be gone while the zset still names it: no schedule.
  if #row > 0 then reply[#reply + 1] = row end
end
return reply
