-- listJobs: newest first, optionally of one state, queue, name, unique key and time of enqueue,
-- keyset-paged by id. Read only, but for the jobs index's entries whose job hash is gone
-- (evicted), which it drops (forget_job, prelude.lua) and leaves out.
-- Walks the jobs index down from the cursor and filters; it stops after `budget` jobs looked at,
-- so a filter that matches rarely costs bounded time per call (the page is then short, and its
-- cursor resumes the walk). A unique key is looked up in the hash of unique keys instead: the
-- job holding it, if any, is the only one to look at.
-- include: lib/prelude.lua, lib/namespace-check.lua
-- flags: allow-oom
-- KEYS, ARGV 1-4: the common layout (prelude.lua).
-- ARGV FIRST: state or '', queue or '', cursor (list ids below it) or '', limit, budget, name or
--   '', createdAfter (inclusive) or '', createdBefore (exclusive) or '', unique key or ''.
-- Returns: { {job (job_reply, prelude.lua), ...} (up to limit + 1), resume id ('' when the walk ended) }.
local state, queue, cursor = ARGV[FIRST], ARGV[FIRST + 1], ARGV[FIRST + 2]
local limit, budget = tonumber(ARGV[FIRST + 3]), tonumber(ARGV[FIRST + 4])
local name = ARGV[FIRST + 5]
local created_after, created_before = tonumber(ARGV[FIRST + 6]), tonumber(ARGV[FIRST + 7])
local unique_key = ARGV[FIRST + 8]
local by_time = created_after ~= nil or created_before ~= nil

-- The job's hash when it passes every filter, else nil (and a job whose hash is gone is forgotten).
local function listed(id)
  local key = P_JOB .. id
  local job = redis.call('HMGET', key, 's', 'q', 'n', 'c')
  if not job[2] then
    forget_job(id)
    return nil
  end
  if (state ~= '' and job[1] ~= state) or (queue ~= '' and job[2] ~= queue) or (name ~= '' and job[3] ~= name) then
    return nil
  end
  if by_time then
    local created_at = tonumber(job[4])
    if (created_after and created_at < created_after) or (created_before and created_at >= created_before) then
      return nil
    end
  end
  return key
end

if unique_key ~= '' then
  local id = redis.call('HGET', K_UNIQUE, unique_key)
  local key = id and (cursor == '' or tonumber(id) < tonumber(cursor)) and listed(id)
  return { key and { job_reply(key, id) } or {}, '' }
end

local max = cursor ~= '' and ('(' .. cursor) or '+inf'
local jobs, looked = {}, 0
while looked < budget do
  local ids = redis.call('ZREVRANGEBYSCORE', K_JOBS, max, '-inf', 'LIMIT', 0, math.min(100, budget - looked))
  if #ids == 0 then return { jobs, '' } end
  for _, id in ipairs(ids) do
    looked = looked + 1
    local key = listed(id)
    if key then
      jobs[#jobs + 1] = job_reply(key, id)
      if #jobs > limit then return { jobs, '' } end
    end
    max = '(' .. id
  end
end
return { jobs, string.sub(max, 2) }
