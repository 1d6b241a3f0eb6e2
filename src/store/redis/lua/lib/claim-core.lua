-- claim-core: claim_jobs takes up to `limit` jobs across the named queues in strict queue order,
-- then priority (higher first), then runAt, then id, and leases them: one call, one round trip,
-- whatever the number of queues. Due scheduled jobs of those queues are promoted first (at most
-- PROMOTE_MAX per queue per call), so they take their place in line. Included by claim.lua,
-- settle-with-claim.lua and enqueue.lua (for lib/deliver.lua).
-- claim_args(i) reads claim_jobs's arguments from ARGV[i]: limit, leaseMs, workerId, lease token
--   base (random, from the client: each job's token is base.n), queue count, then the queues in
--   order: as many as the caller likes (10,000 in tests/store/many-queues.test.ts): never
--   unpack()ed whole; then the names count (0: every name), then the names (ClaimParams.names:
--   only jobs of these). (deliver.lua calls claim_jobs with a waiter's own registration instead,
--   and `delivered`: the jobs are then marked 'dv' = 1 until the waiter takes them,
--   renew.lua with delivered.)
-- An id whose job hash is gone (evicted: prelude.lua, forget_job) is dropped from its zset and
--   skipped; the claim takes the next job in line instead.
-- claim_jobs returns the jobs leased, each as job_reply gives it (prelude.lua), in claim order.
-- Queue control (prelude.lua, queue_room): a paused queue gives nothing, one with a concurrency
--   limit no more than the limit less its live leases; what a queue cannot give comes from the
--   next ones. Decided here, in the script that picks, so no other claim comes in between.
-- Cost: two SMISMEMBER over all the queues (one per 1,000 queues; the may-hold-jobs flags,
--   prelude.lua), then work only on the flagged queues: a ZRANGEBYSCORE on the scheduled zset,
--   and for each the pick comes to, a SISMEMBER (queue control) and a ZPOPMIN on the ready zset
--   (O(log n + taken)); for a queue with a setting, an HMGET of it too (and a ZCOUNT of its
--   leases when limited). Where no queue has a setting, queue control adds 2.0 % to the server's
--   instructions of a claim of one job over 1 queue and 2.4 % over 100 (only the last with jobs;
--   callgrind, 300 claims, 2026-12-03); one SMISMEMBER over the flagged queues, before the pick,
--   added 8 % and 12 % (a call, and a loop over every queue). Without the flags an empty queue
--   cost two calls inside the script: a claim over 100 queues (only the last with jobs) took 1.0 ms against
--   0.37 ms over 1 queue; with them 0.27 ms against 0.26 ms (p50 of 500 claims, shared Redis
--   without AOF, machine load 15).
--   With names: per flagged queue, one ZRANGE per name on that name's ready zset (prelude.lua)
--   and a merge of what they return, so jobs of other names ahead in the queue are never read;
--   each job taken leaves both of its zsets (ZREM, O(log n)). Measured (bench redis-claim, 3 runs,
--   2026-12-02, appendfsync no): 0.18 ms p50 behind 100,000 ready jobs of another name, against
--   0.16 ms for the claim without names on a queue of its own.
-- Start deadlines (prelude.lua, expire_jobs): every claim first ends, as dead with cause
--   'expired', up to EXPIRE_PER_CLAIM jobs of any queue whose deadline has passed, before it
--   promotes or picks; one past that bound that the pick comes to is ended there instead of
--   leased (lease below reads 'x' with the rest of the job). Whether the store has any deadline
--   is one more member of the has-scheduled lookup (DEADLINES_FLAG), so a claim in a store
--   without deadlines sends no command more; with some, one ZRANGE of the earliest. A leased job
--   leaves the deadlines zset only when it has an 'x'.
local PROMOTE_MAX = 1000
-- As the SQLite store's claim: enough that a backlog of expired jobs is cleared in a few claims,
-- few enough that one claim's time stays bounded.
local EXPIRE_PER_CLAIM = 1000

local function claim_jobs(limit, lease_ms, worker_id, token_base, queues, delivered, names)
  -- Which queues may hold jobs: two set lookups for all of them (one per 1,000 queues), so an
  -- empty queue costs nothing more; the first also tells whether any job has a deadline, whose
  -- sweep comes before the ready queues are looked up, as it may empty some.
  local has_scheduled, deadlines = smismember(K_HAS_SCHEDULED, queues, DEADLINES_FLAG)
  if deadlines == 1 then expire_flagged(EXPIRE_PER_CLAIM) end
  local has_ready = smismember(K_HAS_READY, queues)
  for n, queue in ipairs(queues) do
    if has_scheduled[n] == 1 then
      local scheduled = P_SCHEDULED .. queue
      local due = redis.call('ZRANGEBYSCORE', scheduled, '-inf', NOW, 'LIMIT', 0, PROMOTE_MAX)
      for _, id in ipairs(due) do
        local key = P_JOB .. id
        local job = redis.call('HMGET', key, 'pr', 'ra', 'q', 'n')
        if job[3] then
          redis.call('HSET', key, 's', 'ready', 'u', NOW)
          add_ready(queue, job[4], job[1], job[2], id)
          has_ready[n] = 1
        else
          forget_job(id) -- evicted; its scheduled entry goes below with the others
        end
      end
      if #due > 0 then
        redis.call('ZREM', scheduled, unpack(due))
        if redis.call('ZCARD', scheduled) == 0 then redis.call('SREM', K_HAS_SCHEDULED, queue) end
      end
    end
  end

  local lease_expires_at = NOW + lease_ms
  local claimed = {}
  -- Leases the job of a ready entry taken out of its zsets; false when its hash is gone (evicted),
  -- and false and its name when its start deadline has passed (ended as expired).
  -- `tracked`: its queue has a concurrency limit, which counts the lease.
  local function lease(id, queue, tracked)
    local key = P_JOB .. id
    -- Read once, then written and patched: the reply needs no second read.
    local job = job_reply(key, id)
    if not job[AT.q] then
      forget_job(id)
      return false
    end
    local expires_at = job[AT.x]
    if expires_at then
      untrack_deadline(id)
      -- Past the bound of expire_jobs: ended here, never leased.
      if tonumber(expires_at) <= NOW then
        end_expired(key, id, queue)
        return false, job[AT.n]
      end
    end
    local attempts = (tonumber(job[AT.a]) or 0) + 1
    local token = token_base .. '.' .. (#claimed + 1)
    if delivered then
      redis.call('HSET', key, 's', 'active', 'a', attempts, 'lt', token, 'le', lease_expires_at,
        'w', worker_id, 'u', NOW, 'dv', 1)
    else
      redis.call('HSET', key, 's', 'active', 'a', attempts, 'lt', token, 'le', lease_expires_at,
        'w', worker_id, 'u', NOW)
    end
    redis.call('ZADD', K_ACTIVE, lease_expires_at, id)
    if tracked then track_lease(key, queue, id, lease_expires_at) end
    job[AT.s], job[AT.a], job[AT.lt], job[AT.le], job[AT.w], job[AT.u] =
      'active', attempts, token, lease_expires_at, worker_id, NOW
    claimed[#claimed + 1] = job
    return job
  end

  for n, queue in ipairs(queues) do
    if #claimed >= limit then break end
    -- Queue control, looked up only for a queue the claim comes to with jobs in it, so the
    -- queues without a setting cost one SISMEMBER each: room, how many of its jobs the claim may
    -- take (nil: no limit); tracked, its leases count against a concurrency limit (track_lease).
    -- A paused queue's due jobs were promoted above all the same: they are ready, and wait.
    local room, tracked
    if has_ready[n] == 1 and redis.call('SISMEMBER', K_QUEUE_CONTROLS, queue) == 1 then
      room, tracked = queue_room(queue)
    end
    if has_ready[n] == 1 and room ~= 0 then
      local ready = P_READY .. queue
      local emptied = false
      -- What this queue may add to the claim: up to the limit, or its room when less.
      local upto = room and math.min(limit, #claimed + room) or limit
      -- One round, unless an evicted job was skipped and the queue may hold more.
      while not emptied and #claimed < upto do
        local left = upto - #claimed
        if names == nil then
          local popped = redis.call('ZPOPMIN', ready, left)
          -- Fewer than asked: the queue is empty now.
          emptied = #popped < 2 * left
          if emptied then redis.call('SREM', K_HAS_READY, queue) end
          for m = 1, #popped, 2 do
            local job, expired_name = lease(id_of_member(popped[m]), queue, tracked)
            local name = job and job[AT.n] or expired_name
            if name then redis.call('ZREM', ready_name_key(queue, name), popped[m]) end
          end
        else
          -- The first `left` entries of each name, merged into claim order (score, then member,
          -- as a zset orders them).
          local entries = {}
          for _, name in ipairs(names) do
            local first = redis.call('ZRANGE', ready_name_key(queue, name), 0, left - 1, 'WITHSCORES')
            for m = 1, #first, 2 do entries[#entries + 1] = { tonumber(first[m + 1]), first[m], name } end
          end
          if #names > 1 then
            table.sort(entries, function(a, b)
              if a[1] ~= b[1] then return a[1] < b[1] end
              return a[2] < b[2]
            end)
          end
          -- Fewer than asked: no job of these names is left in the queue.
          emptied = #entries < left
          for m = 1, math.min(left, #entries) do
            remove_ready(queue, entries[m][3], entries[m][2])
            lease(id_of_member(entries[m][2]), queue, tracked)
          end
          if redis.call('ZCARD', ready) == 0 then
            redis.call('SREM', K_HAS_READY, queue)
            emptied = true
          end
        end
      end
    end
  end
  return claimed
end

-- claim_jobs's arguments as the client sends them, from ARGV[i].
local function claim_args(i)
  local queues, names = {}, nil
  local queue_count = tonumber(ARGV[i + 4])
  for n = 1, queue_count do queues[n] = ARGV[i + 4 + n] end
  local at = i + 5 + queue_count
  local name_count = tonumber(ARGV[at])
  if name_count > 0 then
    names = {}
    for n = 1, name_count do names[n] = ARGV[at + n] end
  end
  return tonumber(ARGV[i]), tonumber(ARGV[i + 1]), ARGV[i + 2], ARGV[i + 3], queues, false, names
end
