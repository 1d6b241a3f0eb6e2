-- enqueue-core: enqueue_jobs inserts a batch of jobs, as enqueue.lua and fire-schedule.lua take
-- them: one insert path, so that a schedule's jobs are stored, indexed, unique and handed to
-- waiters exactly as any other. A job whose unique key is held returns the holder's id and writes
-- nothing. Included after lib/deliver.lua and lib/change-job.lua; the caller runs
-- deliver_to_waiters and publish_wakes after it, once its own writes are done.
-- enqueue_jobs(from) reads two arguments per job from ARGV[from] to the end:
--   spec: 'queue,name,priority,runAt,delayMs,maxAttempts,timeoutMs,uniqueKey' (runAt and timeoutMs
--     '' for null; uniqueKey last, '' for none, and may itself hold commas)
--   payload: JSON text
--   A job with a group, a start deadline or a meta has its spec prefixed by '+expiresAt,
--   expiresInMs,groupBytes,metaBytes,', its group's bytes and its meta's ('+' then four fields,
--   each '' for none: expiresAt the deadline's instant, expiresInMs the deadline from now, the
--   server's clock as for delayMs; groupBytes and metaBytes the lengths in bytes of the group and
--   of the meta, as both may hold commas). No queue name starts with '+', so a job with none of
--   them costs one string.byte to tell, and stores and indexes nothing more.
--   A job whose unique key has a mode has its spec (prefix included) prefixed again, by
--   '~uniqueUntil,uniqueForMs,debounceMs,' (each '' for none: uniqueUntil 'finished' or 'started',
--   stored as 'uu'; uniqueForMs a throttle's window from now, its end stored as 'ux'; debounceMs:
--   a holder of the key that has not started takes this job's payload and a run time debounceMs
--   from now, through change_job (lib/change-job.lua), and the job is reported debounced).
--   A deadline is stored as 'x' and its job put in the deadlines zset (prelude.lua); a meta (the
--   JSON text of a job's schedule slot and own backoff: kernel/job-meta.ts) as 'm', which no
--   script reads but to return it.
-- Returns: { now, first id, then for each job that was not created: its position (1-based; negated
--   for a debounced job) and its unique key's holder }, and the last job's id (its own, or its key's holder's). The batch
--   draws one id per job with one INCRBY: job n, when created, has the first id + n - 1 (a job not
--   created leaves a gap).
-- A unique key is held by the job the hash of unique keys names, until the transition its mode
--   names frees it (free_unique_key, prelude.lua), or until its throttle's end ('ux'), which the
--   first enqueue of the key to find it passed frees: this job takes the key. Evicted data
--   (allowEviction, prelude.lua): a unique key whose holder's hash is gone is free again; an id counter that is gone while the jobs index is not goes on from the highest id
--   there, so a new job never takes the id (and the hash) of one that is still stored.
-- Cost per job (10,000 jobs of 520 B, own server, AOF always): the hash (8 fields here; attempts,
--   updatedAt and the id are left out: prelude.lua), and its place in the jobs index and its ready
--   zsets (its queue's and its name's), written with one ZADD per key for the whole batch
--   (zadd_all): about 13 µs in all before the name's zset, where two ZADDs per job took 17 µs
--   (EVALSHA usec in INFO commandstats, 5 runs each). Times and the ready score go to redis.call
--   as text, and a queue whose flag was set already is not added to the queues set again (a
--   flagged queue is in it: prelude.lua): with them, 88,000 instructions of redis-server per job of
--   a batch of 200 where there were 106,000, and a single job's call fell from 309,000 to 291,000
--   (callgrind, 2026-12-03; 175,000 as a function: redis-scripts.ts).

-- The jobs index and the ready zsets are written after the loop, with one ZADD per key rather
-- than one per job, in chunks of UNPACK_MAX members (prelude.lua).

-- Gathers (score, member) for `key` in `adds` (key -> flat score, member list); without `adds`
-- (a batch of one job: a serial enqueue) adds it at once, which spares the lists.
local function add_member(adds, key, score, member)
  if adds == nil then
    redis.call('ZADD', key, score, member)
    return
  end
  local list = adds[key]
  if list == nil then
    list = {}
    adds[key] = list
  end
  list[#list + 1] = score
  list[#list + 1] = member
end

local function zadd_all(adds)
  for key, list in pairs(adds) do
    for first = 1, #list, 2 * UNPACK_MAX do
      redis.call('ZADD', key, unpack(list, first, math.min(first + 2 * UNPACK_MAX - 1, #list)))
    end
  end
end

local function enqueue_jobs(from)
  local count = (#ARGV - from + 1) / 2
  local first_id = redis.call('INCRBY', K_ID, string.format('%d', count)) - count + 1
  if first_id == 1 then
    -- A new counter: a new namespace, whose jobs index is empty, unless the counter was evicted.
    local last = redis.call('ZREVRANGE', K_JOBS, 0, 0, 'WITHSCORES')
    if last[2] then
      first_id = tonumber(last[2]) + 1
      redis.call('SET', K_ID, string.format('%d', first_id + count - 1))
    end
  end
  local results, last_id = { NOW, first_id }, nil
  local known_queue = {}
  local zadds = count > 1 and {} or nil
  -- Times go to redis.call as text: a number argument is formatted with %.17g (header).
  local now_text = string.format('%d', NOW)
  for n = 1, count do
    local i = from + 2 * (n - 1)
    local spec = ARGV[i]
    -- How long its unique key holds, for a key with a mode (header); nil otherwise.
    local unique_until, unique_for_ms, debounce_ms
    if string.byte(spec) == 126 then
      unique_until, unique_for_ms, debounce_ms, spec = string.match(spec, '^~(%a*),(%d*),(%d*),(.*)$')
    end
    -- A group, a start deadline and a meta, for a job with any (header); nil otherwise.
    local group, expires_at, job_meta
    if string.byte(spec) == 43 then
      local x_at, x_in, group_bytes, meta_bytes, rest = string.match(spec, '^%+(-?%d*),(%d*),(%d*),(%d*),(.*)$')
      if group_bytes ~= '' then
        local length = tonumber(group_bytes)
        group, rest = string.sub(rest, 1, length), string.sub(rest, length + 1)
      end
      if meta_bytes ~= '' then
        local length = tonumber(meta_bytes)
        job_meta, rest = string.sub(rest, 1, length), string.sub(rest, length + 1)
      end
      spec = rest
      if x_at ~= '' then
        expires_at = x_at
      elseif x_in ~= '' then
        expires_at = string.format('%d', NOW + tonumber(x_in))
      end
    end
    local queue, name, priority, run_at, delay_ms, max_attempts, timeout_ms, unique_key =
      string.match(spec, '^([^,]*),([^,]*),([^,]*),([^,]*),([^,]*),([^,]*),([^,]*),(.*)$')
    local holder = unique_key ~= '' and redis.call('HGET', K_UNIQUE, unique_key)
    if holder then
      local held = redis.call('HMGET', P_JOB .. holder, 'q', 'ux')
      -- Its job was evicted, or its throttle has ended: the key is this job's now (HSET below).
      if not held[1] or (held[2] and tonumber(held[2]) <= NOW) then holder = false end
    end
    if holder then
      local position = n
      if debounce_ms and debounce_ms ~= '' then
        -- A holder of this batch may still have its entries in the lists of zadds: written first,
        -- so that the change moves them.
        if zadds and tonumber(holder) >= first_id then
          zadd_all(zadds)
          zadds = {}
        end
        -- A holder that has started (and holds the key until it finishes) is left as it is.
        if change_job(holder, nil, NOW + tonumber(debounce_ms), ARGV[i + 1], nil) == 'ok' then position = -n end
      end
      results[#results + 1] = position
      results[#results + 1] = holder
      last_id = holder
    else
      local id = string.format('%d', first_id + n - 1)
      last_id = id
      local at, at_text
      if run_at ~= '' then
        at, at_text = tonumber(run_at), run_at
      elseif delay_ms == '0' then
        at, at_text = NOW, now_text
      else
        at = NOW + tonumber(delay_ms)
        at_text = string.format('%d', at)
      end
      local key = P_JOB .. id
      local ready = at <= NOW
      local state = ready and 'ready' or 'scheduled'
      if timeout_ms == '' and unique_key == '' and group == nil and expires_at == nil and job_meta == nil then
        redis.call('HSET', key, 'q', queue, 'n', name, 'p', ARGV[i + 1], 's', state, 'pr', priority, 'ra', at_text,
          'ma', max_attempts, 'c', now_text)
      else
        local fields = { 'q', queue, 'n', name, 'p', ARGV[i + 1], 's', state, 'pr', priority, 'ra', at_text,
          'ma', max_attempts, 'c', now_text }
        if timeout_ms ~= '' then
          fields[#fields + 1] = 'to'
          fields[#fields + 1] = timeout_ms
        end
        if unique_key ~= '' then
          fields[#fields + 1] = 'uk'
          fields[#fields + 1] = unique_key
          redis.call('HSET', K_UNIQUE, unique_key, id)
          if unique_until and unique_until ~= '' then
            fields[#fields + 1] = 'uu'
            fields[#fields + 1] = unique_until
          end
          if unique_for_ms and unique_for_ms ~= '' then
            fields[#fields + 1] = 'ux'
            fields[#fields + 1] = string.format('%d', NOW + tonumber(unique_for_ms))
          end
        end
        if group then
          fields[#fields + 1] = 'g'
          fields[#fields + 1] = group
        end
        if expires_at then
          fields[#fields + 1] = 'x'
          fields[#fields + 1] = expires_at
          add_member(zadds, K_DEADLINES, expires_at, id)
          flag_deadlines()
        end
        if job_meta then
          fields[#fields + 1] = 'm'
          fields[#fields + 1] = job_meta
          -- Its own keepForMs, where the scripts that finish and delete jobs read it with the fields
          -- they read anyway (prelude.lua, add_finished): only a job with a meta decodes it.
          local keep = cjson.decode(job_meta).keepForMs
          if keep then
            fields[#fields + 1] = 'k'
            fields[#fields + 1] = string.format('%d', keep)
          end
        end
        redis.call('HSET', key, unpack(fields))
      end
      add_member(zadds, K_JOBS, id, id)
      -- Whether the queue's flag was set already (0): then the queue is in the queues set (prelude.lua).
      local flag
      if ready then
        local score, member = ready_entry(priority, at, id)
        if group then
          -- In its group's zsets, and its group in the queue's (prelude.lua, add_group_ready).
          add_member(zadds, group_ready_key(queue, group), score, member)
          add_member(zadds, group_ready_key(queue, group, name), score, member)
          add_member(zadds, groups_key(queue), '0', group)
          add_member(zadds, groups_key(queue, name), '0', group)
          flag_groups(queue)
        else
          add_member(zadds, P_READY .. queue, score, member)
          add_member(zadds, ready_name_key(queue, name), score, member)
        end
        flag = flag_ready(queue)
      else
        flag = add_scheduled(queue, at_text, id)
      end
      if not known_queue[queue] then
        known_queue[queue] = true
        -- Under an eviction policy the queues set may be gone while the flags are not.
        if flag ~= 0 or EVICTION_ALLOWED then redis.call('SADD', K_QUEUES, queue) end
      end
    end
  end
  if zadds then zadd_all(zadds) end
  return results, last_id
end
