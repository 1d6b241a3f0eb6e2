-- claim-core: claim_jobs takes up to `limit` jobs across the named queues in strict queue order,
-- then priority (higher first), then runAt, then id, and leases them: one call, one round trip,
-- whatever the number of queues. Due scheduled jobs of those queues are promoted first (at most
-- PROMOTE_MAX per queue per call), so they take their place in line. Included by claim.lua,
-- settle-with-claim.lua, and enqueue.lua and fire-schedule.lua (for lib/deliver.lua).
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
-- Queue control (prelude.lua, queue_gate): a paused queue gives nothing, one with a concurrency
--   limit no more than the limit less its live leases, one with a rate no more than its window
--   allows; a queue with grouped ready jobs is gone round group by group (claim_round), each
--   group held to the group limits; what a queue cannot give comes from the next ones. Decided
--   here, in the script that picks, so no other claim comes in between.
-- Rates, group limits and fairness cost a store that uses none of them one member more in the
--   has-ready lookup: 0.8 % more server instructions for a claim of one job over 1 queue (240,700
--   against 238,800), 1.3 % over 100 (only the last with jobs), 0.2 % for a claim that finds
--   nothing, 2.3 % for a settle with a claim (its settle reads 'g' and 'lg' too), 1.0 % for an
--   enqueue of one job; 1.9 % for the claim of one job when another queue has grouped ready jobs
--   (an EXISTS of the queue's groups zset). Callgrind, 300 calls each, medians of 3 to 5 runs,
--   2026-12-03. Built as closures on every claim (as `lease` was), these functions had cost 3.9 %,
--   2.4 %, 8.4 % and 4.5 %. With them: a claim of one job from a queue of 10 groups costs 36 % more
--   than one from a queue without groups; from a queue with a rate, 37 %; from 10 groups with a
--   rate, a group rate and a group concurrency limit, 119 %.
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
-- Logs of a queue's groups (rate limits) whose latest start left the window, deleted per claim
-- that logs a start of the queue: enough to keep up with the groups that go quiet.
local PRUNE_GROUPS = 100

-- The claim in progress, which claim_jobs sets for the functions below: they are defined once,
-- when the library is loaded, rather than as closures on every claim (building them cost a claim
-- that finds nothing 8 % more instructions, callgrind). `claimed`: the jobs leased so far;
-- `pruned_logs`: the start logs this claim has pruned (log_start), nil until it logs one.
local claimed, lease_expires_at, claim_worker, claim_tokens, claim_delivered, claim_names, pruned_logs

-- Rate limits' logs (prelude.lua, window_room): each start goes in its queue's log and, with a
-- group, its group's, each pruned of the starts that left the longest window the first time this
-- claim writes to it; the first start of a queue also deletes the logs of up to PRUNE_GROUPS of
-- its groups whose latest start has left it.
local function log_start(queue, group, token, gate)
  local log = P_STARTS .. queue
  local now_text, old = string.format('%d', NOW), string.format('%d', NOW - gate.window)
  if pruned_logs == nil then pruned_logs = {} end
  if not pruned_logs[log] then
    pruned_logs[log] = true
    redis.call('ZREMRANGEBYSCORE', log, '-inf', old)
    local index = P_START_GROUPS .. queue
    local idle = redis.call('ZRANGEBYSCORE', index, '-inf', old, 'LIMIT', 0, PRUNE_GROUPS)
    if #idle > 0 then
      for _, idle_group in ipairs(idle) do redis.call('DEL', group_starts_key(queue, idle_group)) end
      redis.call('ZREM', index, unpack(idle))
    end
  end
  redis.call('ZADD', log, now_text, token)
  if group then
    local group_log = group_starts_key(queue, group)
    if not pruned_logs[group_log] then
      pruned_logs[group_log] = true
      redis.call('ZREMRANGEBYSCORE', group_log, '-inf', old)
    end
    redis.call('ZADD', group_log, now_text, token)
    redis.call('ZADD', P_START_GROUPS .. queue, 'GT', now_text, group)
  end
end

-- Leases the job of a ready entry taken out of its zsets; false when its hash is gone (evicted),
-- and false and its name when its start deadline has passed (ended as expired).
-- `gate`: its queue's settings (queue_gate, prelude.lua), nil for none: a concurrency limit
-- counts the lease, a group concurrency limit counts it for its group, a rate logs the start.
local function lease(id, queue, gate)
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
  local token = claim_tokens .. '.' .. (#claimed + 1)
  if claim_delivered then
    redis.call('HSET', key, 's', 'active', 'a', attempts, 'lt', token, 'le', lease_expires_at,
      'w', claim_worker, 'u', NOW, 'dv', 1)
  else
    redis.call('HSET', key, 's', 'active', 'a', attempts, 'lt', token, 'le', lease_expires_at,
      'w', claim_worker, 'u', NOW)
  end
  redis.call('ZADD', K_ACTIVE, lease_expires_at, id)
  -- A key that frees when its job starts: only a job with a key pays for the look.
  if job[AT.uk] and redis.call('HGET', key, 'uu') == 'started' then free_unique_key(id, job[AT.uk]) end
  if gate then
    local group = job[AT.g] or nil
    if gate.concurrency then track_lease(key, queue, id, lease_expires_at) end
    if group and gate.group_concurrency then track_group_lease(key, queue, group, id, lease_expires_at) end
    if gate.logs then log_start(queue, group, token, gate) end
  end
  job[AT.s], job[AT.a], job[AT.lt], job[AT.le], job[AT.w], job[AT.u] =
    'active', attempts, token, lease_expires_at, claim_worker, NOW
  claimed[#claimed + 1] = job
  return job
end

-- A queue's share of the claim when it has no grouped ready jobs: its jobs in line, up to `upto`
-- jobs in all. Returns whether the queue has no job (of the claim's names) left.
local function claim_in_line(queue, gate, upto)
  local ready = P_READY .. queue
  local emptied = false
  -- One round, unless an evicted job was skipped and the queue may hold more.
  while not emptied and #claimed < upto do
    local left = upto - #claimed
    if claim_names == nil then
      local popped = redis.call('ZPOPMIN', ready, left)
      -- Fewer than asked: the queue is empty now.
      emptied = #popped < 2 * left
      if emptied then redis.call('SREM', K_HAS_READY, queue) end
      for m = 1, #popped, 2 do
        local job, expired_name = lease(id_of_member(popped[m]), queue, gate)
        local name = job and job[AT.n] or expired_name
        if name then redis.call('ZREM', ready_name_key(queue, name), popped[m]) end
      end
    else
      -- The first `left` entries of each name, merged into claim order (score, then member,
      -- as a zset orders them).
      local entries = {}
      for _, name in ipairs(claim_names) do
        local first = redis.call('ZRANGE', ready_name_key(queue, name), 0, left - 1, 'WITHSCORES')
        for m = 1, #first, 2 do entries[#entries + 1] = { tonumber(first[m + 1]), first[m], name } end
      end
      if #claim_names > 1 then
        table.sort(entries, function(a, b)
          if a[1] ~= b[1] then return a[1] < b[1] end
          return a[2] < b[2]
        end)
      end
      -- Fewer than asked: no job of these names is left in the queue.
      emptied = #entries < left
      for m = 1, math.min(left, #entries) do
        remove_ready(queue, entries[m][3], entries[m][2])
        lease(id_of_member(entries[m][2]), queue, gate)
      end
      if redis.call('ZCARD', ready) == 0 then
        redis.call('SREM', K_HAS_READY, queue)
        emptied = true
      end
    end
  end
  return emptied
end

-- Takes out of the queue's ready zsets the next entry in line of `group` ('': the jobs without
-- one) and of the claim's names; returns it (nil when there is none) and, with names, its name.
-- Without names, what the job's name decides is left to the caller (claim_round's turn).
local function next_entry(queue, group)
  if claim_names == nil then
    return redis.call('ZPOPMIN', group == '' and P_READY .. queue or group_ready_key(queue, group))[1]
  end
  local best, best_score, best_name
  for _, name in ipairs(claim_names) do
    local key = group == '' and ready_name_key(queue, name) or group_ready_key(queue, group, name)
    local first = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
    if first[1] then
      local score = tonumber(first[2])
      if best == nil or score < best_score or (score == best_score and first[1] < best) then
        best, best_score, best_name = first[1], score, name
      end
    end
  end
  if best then remove_ready(queue, best_name, best, group ~= '' and group or nil) end
  return best, best_name
end

-- A queue's share of the claim when it has grouped ready jobs (prelude.lua): round its groups.
-- The rotation is '' (its jobs without a group, as one group) then its groups in byte order; the
-- queue's cursor (the group-cursors hash) is the last one served, and each job is taken from the
-- next one after it, cyclically, that has a job (of the claim's names) and room under the group
-- limits; within one, in the queue's order (priority, runAt, id). A full round without a take
-- ends the share. The groups are read a page at a time, as the rotation reaches them, and
-- gone round again from memory. Takes up to `upto` jobs in all (the claim's, with this queue's);
-- returns the earliest time the window of a group held by its group rate lets a start in, when
-- the share ended for want of room (nil for none).
local function claim_round(queue, gate, upto)
  local cursor = redis.call('HGET', K_GROUP_CURSORS, queue)
  -- The rotation from just after the cursor: the groups after it, '', the groups up to it; with
  -- no cursor, '' then every group.
  local rotation, from, phase, last_max, complete = {}, '-', 'after', nil, false
  if cursor == false then
    rotation[1], phase, last_max = '', 'upto', '+'
  elseif cursor ~= '' then
    from, last_max = '(' .. cursor, '[' .. cursor
  end
  local page = claim_names == nil and 8 or 4
  local function load()
    local before = #rotation
    while not complete and #rotation == before do
      if phase == 'upto' and last_max == nil then
        complete = true
      else
        local groups, more = groups_range(queue, claim_names, from, phase == 'after' and '+' or last_max, page)
        page = math.min(4 * page, GROUP_PAGE_MAX)
        for _, group in ipairs(groups) do rotation[#rotation + 1] = group end
        if more then
          from = '(' .. groups[#groups]
        elseif phase == 'after' then
          rotation[#rotation + 1] = ''
          phase, from = 'upto', '-'
        else
          complete = true
        end
      end
    end
  end
  -- Per group: done (no job left, or no room: not tried again in this claim), empty, and its room
  -- left under group concurrency and group rate (nil: no such limit), with when its window opens.
  local done, empty, checked, lease_room, start_room, opens_of = {}, {}, {}, {}, {}, {}
  local limited = gate and (gate.group_concurrency or gate.group_rate_limit)
  local function turn(group)
    if limited and group ~= '' then
      if not checked[group] then
        checked[group] = true
        lease_room[group], start_room[group], opens_of[group] = group_room(queue, group, gate)
      end
      if lease_room[group] == 0 or start_room[group] == 0 then
        done[group] = true
        return false
      end
    end
    while true do
      local member, name = next_entry(queue, group)
      if member == nil then
        done[group], empty[group] = true, true
        return false
      end
      local job, expired_name = lease(id_of_member(member), queue, gate)
      if claim_names == nil then
        name = job and job[AT.n] or expired_name
        if group == '' then
          if name then redis.call('ZREM', ready_name_key(queue, name), member) end
        else
          if name then redis.call('ZREM', group_ready_key(queue, group, name), member) end
          if group_entry_gone(queue, group, name) then done[group], empty[group] = true, true end
        end
      end
      if job then
        if lease_room[group] then lease_room[group] = lease_room[group] - 1 end
        if start_room[group] then start_room[group] = start_room[group] - 1 end
        return true
      end
      if done[group] then return false end
    end
  end
  local at, served, visited = 0, nil, {}
  while #claimed < upto do
    if at >= #rotation then load() end
    if at >= #rotation then at = 0 end
    at = at + 1
    local group = rotation[at]
    if visited[group] then break end
    visited[group] = true
    if not done[group] and turn(group) then
      served, visited = group, {}
    end
  end
  if served then redis.call('HSET', K_GROUP_CURSORS, queue, served) end
  if next(empty) ~= nil then unflag_ready_if_empty(queue) end
  -- The groups the share left ready jobs in because of their rate.
  local opens
  if #claimed < upto and gate and gate.group_rate_limit then
    for group, left in pairs(start_room) do
      if left == 0 and not empty[group] then
        local group_opens = opens_of[group]
        if group_opens == nil then
          local _
          _, group_opens = window_room(group_starts_key(queue, group), gate.group_rate_limit, gate.group_rate_per_ms)
        end
        if group_opens and (opens == nil or group_opens < opens) then opens = group_opens end
      end
    end
  end
  return opens
end

local function claim_jobs(limit, lease_ms, worker_id, token_base, queues, delivered, names)
  -- Which queues may hold jobs: two set lookups for all of them (one per 1,000 queues), so an
  -- empty queue costs nothing more; the first also tells whether any job has a deadline, whose
  -- sweep comes before the ready queues are looked up, as it may empty some; the second whether
  -- any queue has grouped ready jobs (GROUPS_FLAG, prelude.lua).
  local has_scheduled, deadlines = smismember(K_HAS_SCHEDULED, queues, DEADLINES_FLAG)
  if deadlines == 1 then expire_flagged(EXPIRE_PER_CLAIM) end
  local has_ready, groups_flagged = smismember(K_HAS_READY, queues, GROUPS_FLAG)
  for n, queue in ipairs(queues) do
    if has_scheduled[n] == 1 then
      local scheduled = P_SCHEDULED .. queue
      local due = redis.call('ZRANGEBYSCORE', scheduled, '-inf', NOW, 'LIMIT', 0, PROMOTE_MAX)
      for _, id in ipairs(due) do
        local key = P_JOB .. id
        local job = redis.call('HMGET', key, 'pr', 'ra', 'q', 'n', 'g')
        if job[3] then
          redis.call('HSET', key, 's', 'ready', 'u', NOW)
          add_ready(queue, job[4], job[1], job[2], id, job[5] or nil)
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
  -- The flag read above may predate a promotion that set it.
  local grouped_store = groups_flagged == 1 or (flagged_groups ~= nil and flagged_groups[GROUPS_FLAG] ~= nil)

  claimed, lease_expires_at, claim_worker, claim_tokens, claim_delivered, claim_names, pruned_logs =
    {}, NOW + lease_ms, worker_id, token_base, delivered, names, nil
  for n, queue in ipairs(queues) do
    if #claimed >= limit then break end
    -- Queue control, looked up only for a queue the claim comes to with jobs in it, so the
    -- queues without a setting cost one SISMEMBER each: room, how many of its jobs the claim may
    -- take (nil: no limit; queue_gate, prelude.lua).
    -- A paused queue's due jobs were promoted above all the same: they are ready, and wait.
    local gate, room
    if has_ready[n] == 1 and redis.call('SISMEMBER', K_QUEUE_CONTROLS, queue) == 1 then
      gate = queue_gate(queue)
      room = gate.room
    end
    -- When a rate keeps ready jobs of the queue from starting: when its window lets one in.
    local held_until = room == 0 and gate.opens or nil
    if has_ready[n] == 1 and room ~= 0 then
      local before = #claimed
      -- What this queue may add to the claim: up to the limit, or its room when less.
      local upto = room and math.min(limit, #claimed + room) or limit
      local emptied
      if grouped_store and redis.call('EXISTS', groups_key(queue)) == 1 then
        held_until = claim_round(queue, gate, upto)
        emptied = #claimed < upto
      else
        emptied = claim_in_line(queue, gate, upto)
      end
      -- The queue's own rate held back what the claim wanted more of: its window is full now.
      if gate and gate.rate_room and not emptied and #claimed < limit and #claimed - before >= gate.rate_room then
        local _, opens = window_room(P_STARTS .. queue, gate.rate_limit, gate.rate_per_ms)
        if opens and (held_until == nil or opens < held_until) then held_until = opens end
      end
    end
    -- The hint a waiter's next due time reads (wait-for-work.lua): a rate's window, unlike a
    -- lease or a scheduled job, opens without any script being told.
    if held_until then
      redis.call('HSET', P_QUEUE_CONTROL .. queue, 'rate_opens_at', string.format('%d', held_until))
    end
  end
  local jobs = claimed
  claimed = nil
  return jobs
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
