-- settle-core: settle_items applies a batch of settlements, each fenced by its lease token: an item
-- whose job is not active under that token changes nothing and reports lease lost. Included by
-- settle.lua and settle-with-claim.lua.
-- settle_items(i) reads from ARGV[i]: item count, then seven per item:
--   kind ('completed'|'retry'|'snoozed'|'dead'), id, lease token,
--   runAt (retry, snoozed; else ''), data (completed: result JSON or '' for none; retry, dead:
--   the error JSON; snoozed: ''), then what the handler reported since the last renewal, as
--   renew.lua takes it: progress ('pg', '' to keep it) and logs ('lo', '' to keep them)
-- It returns { 1 (ok) | 0 (lease lost), ... } in input order, and the index of the next ARGV. A
--   job whose hash is gone (evicted) is lease lost too, and leaves the active zset and the jobs
--   index (prelude.lua).
-- A job that completes or ends dead frees its unique key if its mode ('uu') says so
--   (free_unique_key, prelude.lua).
-- A job put back in line (retry, snoozed) with a start deadline ('x') is in the deadlines zset
--   again (put_back, prelude.lua): as in the SQL stores, it ends as expired if its deadline passes
--   before it is claimed again.
-- The wake-ups for jobs put back in line ('r<queue>' / 's<runAt> <queue>'), and for the queues
--   with a concurrency or group concurrency limit that a settled job makes room in ('r<queue>':
--   untrack_lease, untrack_group_lease), are
--   published by the script's publish_wakes() (prelude.lua).
local function settle_items(i)
  local count = tonumber(ARGV[i])
  local results = {}
  i = i + 1
  for n = 1, count do
    local kind, id, token, run_at, data = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], ARGV[i + 4]
    local progress, logs = ARGV[i + 5], ARGV[i + 6]
    i = i + 7
    local key = P_JOB .. id
    local job = redis.call('HMGET', key, 's', 'lt', 'q', 'pr', 'n', 'lq', 'x', 'g', 'lg', 'uu', 'uk', 'k')
    if not job[3] then
      redis.call('ZREM', K_ACTIVE, id)
      forget_job(id)
      results[n] = 0
    elseif job[1] ~= 'active' or job[2] ~= token then
      results[n] = 0
    else
      local queue = job[3]
      if progress ~= '' then redis.call('HSET', key, 'pg', progress) end
      if logs ~= '' then redis.call('HSET', key, 'lo', logs) end
      redis.call('ZREM', K_ACTIVE, id)
      if job[6] then untrack_lease(key, queue, id) end
      if job[9] then untrack_group_lease(key, queue, job[8], id) end
      if kind == 'completed' then
        -- The lease's fields and any earlier attempt's result go in one HDEL: one call less per job.
        if data ~= '' then
          redis.call('HDEL', key, 'lt', 'le', 'w', 'dv')
          redis.call('HSET', key, 's', 'completed', 'r', data, 'f', NOW, 'u', NOW)
        else
          redis.call('HDEL', key, 'lt', 'le', 'w', 'dv', 'r')
          redis.call('HSET', key, 's', 'completed', 'f', NOW, 'u', NOW)
        end
        add_finished(queue, id, 'completed', job[12])
        if job[10] then free_unique_key(id, job[11]) end
      elseif kind == 'dead' then
        redis.call('HDEL', key, 'lt', 'le', 'w', 'dv')
        redis.call('HSET', key, 's', 'dead', 'e', data, 'f', NOW, 'u', NOW)
        add_finished(queue, id, 'dead', job[12])
        if job[10] then free_unique_key(id, job[11]) end
      else
        local at = tonumber(run_at)
        redis.call('HDEL', key, 'lt', 'le', 'w', 'dv')
        redis.call('HSET', key, 'ra', at, 'u', NOW)
        if kind == 'retry' then
          redis.call('HSET', key, 'e', data)
        else
          redis.call('HINCRBY', key, 'a', -1)
        end
        put_back(key, id, queue, job[5], job[4], at, job[7], job[8] or nil)
      end
      results[n] = 1
    end
  end
  return results, i
end
