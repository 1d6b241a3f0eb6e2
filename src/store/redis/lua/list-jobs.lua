-- listJobs: newest first, optionally one state and/or one queue, keyset-paged by id. Read only,
-- but for the jobs index's entries whose job hash is gone (evicted), which it drops (forget_job,
-- prelude.lua) and leaves out.
-- Walks the jobs index down from the cursor and filters; it stops after `budget` jobs looked at,
-- so a filter that matches rarely costs bounded time per call (the page is then short, and its
-- cursor resumes the walk).
-- include: lib/prelude.lua, lib/namespace-check.lua
-- flags: allow-oom
-- KEYS, ARGV 1-4: the common layout (prelude.lua).
-- ARGV FIRST: state or '', queue or '', cursor (list ids below it) or '', limit, budget.
-- Returns: { {job (job_reply, prelude.lua), ...} (up to limit + 1), resume id ('' when the walk ended) }.
local state, queue, cursor = ARGV[FIRST], ARGV[FIRST + 1], ARGV[FIRST + 2]
local limit, budget = tonumber(ARGV[FIRST + 3]), tonumber(ARGV[FIRST + 4])
local max = cursor ~= '' and ('(' .. cursor) or '+inf'
local jobs, looked = {}, 0
while looked < budget do
  local ids = redis.call('ZREVRANGEBYSCORE', K_JOBS, max, '-inf', 'LIMIT', 0, math.min(100, budget - looked))
  if #ids == 0 then return { jobs, '' } end
  for _, id in ipairs(ids) do
    looked = looked + 1
    local key = P_JOB .. id
    local job = redis.call('HMGET', key, 's', 'q')
    if not job[2] then
      forget_job(id)
    elseif (state == '' or job[1] == state) and (queue == '' or job[2] == queue) then
      jobs[#jobs + 1] = job_reply(key, id)
      if #jobs > limit then return { jobs, '' } end
    end
    max = '(' .. id
  end
end
return { jobs, string.sub(max, 2) }
