-- migrate: records the key layout's version and the namespace's instance marker. Redis has no
-- schema: a layout change would move data here, in one atomic step.
--   layout 1 (0001_key-layout): the keys in prelude.lua.
--   layout 2 (0002_instance-marker): the instance marker (K_INSTANCE), a random id written here
--     once (SET NX) and never changed. Every store reads it at open and every script checks it
--     (prelude.lua), so that a server emptied under running workers is noticed, not refilled.
--   layout 3 (0003_ready-by-name): each ready job is also in its queue's ready zset for its name
--     (prelude.lua, ready_name_key), for claims with a names filter. Built here from the queues'
--     ready zsets, in this one script: its time grows with the ready jobs, and the server serves
--     nothing else meanwhile.
--   layout 4 (0004_ready-by-group): a ready job with a group is in its group's ready zsets instead
--     of its queue's (prelude.lua, add_group_ready), so that claims go round the groups. Moved here
--     from the queues' ready zsets, in this one script too (after layout 3's, when both apply).
--   layout 5 (0005_schedules): the schedules (prelude.lua: schedules, schedules version, a hash per
--     schedule) and a job's meta ('m'). Nothing to move: a namespace before it has no schedule, and
--     its jobs no meta. The version alone keeps an earlier Ferry, which would run jobs without their
--     own backoff, off the namespace.
--   layout 6 (0006_unique-modes): how long a job's unique key holds (prelude.lua: 'uu' and 'ux'),
--     freed at its job's transition. Nothing to move: every key held before it holds until the
--     purge. The version alone keeps an earlier Ferry, which would never free a key, off the
--     namespace.
--   layout 7 (0007_retention): a job's own keepForMs ('k'), and the kept zsets where its queue's
--     retention does not read it (prelude.lua, add_finished). Nothing to move: no job of a namespace
--     before it has a keepForMs. The version keeps an earlier Ferry, which would neither count,
--     retry nor purge those jobs, off the namespace.
-- include: lib/prelude.lua
-- KEYS, ARGV 1-4: the common layout (prelude.lua). ARGV 3 is '' at open; a store that is open
--   already (migrate() called again) passes its marker, checked first, as namespace-check.lua does
--   for every other script.
-- ARGV FIRST: this Ferry's version; FIRST + 1: a new random id, the marker if the namespace has none.
-- Returns: { fromVersion, toVersion, the namespace's instance marker }, or the errors
--   'FERRY schema_too_new <version>' and 'FERRY namespace_lost …' (prelude.lua).
if INSTANCE ~= '' then
  local lost = namespace_lost()
  if lost then return lost end
end
local latest = tonumber(ARGV[FIRST])
local version = tonumber(redis.call('GET', K_SCHEMA) or '0')
if version > latest then
  return redis.error_reply('FERRY schema_too_new ' .. version)
end
if version >= 1 and version < 3 and latest >= 3 then
  for _, queue in ipairs(redis.call('SMEMBERS', K_QUEUES)) do
    local ready = P_READY .. queue
    local start = 0
    -- In pages, so that no reply nor unpack() grows with the backlog.
    while true do
      local page = redis.call('ZRANGE', ready, start, start + UNPACK_MAX - 1, 'WITHSCORES')
      if #page == 0 then break end
      for m = 1, #page, 2 do
        local name = redis.call('HGET', P_JOB .. id_of_member(page[m]), 'n')
        if name then redis.call('ZADD', ready_name_key(queue, name), page[m + 1], page[m]) end
      end
      start = start + UNPACK_MAX
    end
  end
end
if version >= 1 and version < 4 and latest >= 4 then
  for _, queue in ipairs(redis.call('SMEMBERS', K_QUEUES)) do
    local ready = P_READY .. queue
    local start = 0
    while true do
      local page = redis.call('ZRANGE', ready, start, start + UNPACK_MAX - 1, 'WITHSCORES')
      if #page == 0 then break end
      local kept = 0
      for m = 1, #page, 2 do
        local job = redis.call('HMGET', P_JOB .. id_of_member(page[m]), 'n', 'g')
        if job[1] and job[2] then
          redis.call('ZREM', ready, page[m])
          redis.call('ZREM', ready_name_key(queue, job[1]), page[m])
          add_group_ready(queue, job[1], job[2], page[m + 1], page[m])
        else
          kept = kept + 1
        end
      end
      -- The entries moved out of the zset no longer count in the next page's start.
      start = start + kept
    end
  end
end
if version < latest then redis.call('SET', K_SCHEMA, latest) end
redis.call('SET', K_INSTANCE, ARGV[FIRST + 1], 'NX')
return { version, math.max(version, latest), redis.call('GET', K_INSTANCE) }
