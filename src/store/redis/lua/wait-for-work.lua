-- waitForWork: run once the waiter is subscribed. Is work waiting on these queues already (a ready
-- job, or a scheduled one that is due)? Else, when is the next scheduled job of these queues due?
-- And if the wait has a claim, registers the waiter for deliveries (deliver.lua), in the
-- same step, so nothing enqueued between the check and the registration goes unseen.
-- include: lib/prelude.lua, lib/namespace-check.lua, lib/groups.lua
-- flags: allow-oom
-- KEYS, ARGV 1-4: the common layout (prelude.lua).
-- ARGV FIRST: the waiter id, or '' for none; FIRST + 1: its registration (JSON, deliver.lua) or '';
--   FIRST + 2: the names count (0: every name), then the names (WaitParams.names: only ready jobs
--   of these count, one ZCARD of each name's ready zset per queue), then the queues.
-- Returns: { now, 1 if work is waiting else 0, the next due time or '' (the earliest runAt of a
--   scheduled job, or when a limit or a rate lets a job start: below), the schedules
--   version and the stop key, last as it may be nil (the store compares both with the last it knew
--   of, to catch a change of schedules or a stop request published before it subscribed) }.
-- A due scheduled job counts whatever its name: the waiter's claim promotes it, so it is due once.
-- The jobs of a queue the waiter's claim could take none of (paused, or at its concurrency limit
-- or its rate: queue_gate, prelude.lua), and grouped jobs whose groups are all at a group limit
-- (lib/groups.lua), do not count, else the waiter would be woken at once, again and again.
-- What frees such a queue or group wakes its waiters (control.lua, settle-core.lua); what frees it
-- with time alone gives the next due time instead: a limited queue's or group's earliest live
-- lease (a lease that runs out frees room without any script being told), and a rate's window:
-- the queue's own and its groups' as this look finds them, and the queue's rate_opens_at, which
-- the last claim held back by a rate left (claim-core.lua). A time already past is no due time.
local stop = redis.call('GET', K_STOP)
local schedules_version = redis.call('GET', K_SCHEDULES_VERSION) or '0'
local next_due = nil
local function due(at)
  if at > NOW and (next_due == nil or at < next_due) then next_due = at end
end
local name_count = tonumber(ARGV[FIRST + 2])
local names_at = FIRST + 3
local names = nil
if name_count > 0 then
  names = {}
  for n = 1, name_count do names[n] = ARGV[names_at + n - 1] end
end
local queues = {}
for i = names_at + name_count, #ARGV do queues[#queues + 1] = ARGV[i] end

-- The earliest live lease of a leases zset, as a due time.
local function lease_ends(leases)
  local first = redis.call('ZRANGEBYSCORE', leases, '(' .. string.format('%d', NOW), '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
  if first[2] then due(tonumber(first[2])) end
end

-- Whether the queue's grouped ready jobs (of the names) hold one its claim could take: a group
-- with room under the group limits (`gate`, nil for none). Every group may be looked at, as a
-- claim going round them would.
local function group_work(queue, gate)
  if not (gate and (gate.group_concurrency or gate.group_rate_limit)) then
    if names == nil then return redis.call('EXISTS', groups_key(queue)) == 1 end
    for _, name in ipairs(names) do
      if redis.call('EXISTS', groups_key(queue, name)) == 1 then return true end
    end
    return false
  end
  local from = '-'
  while true do
    local groups, more = groups_range(queue, names, from, '+', GROUP_PAGE_MAX)
    for _, group in ipairs(groups) do
      local leases, starts, opens = group_room(queue, group, gate)
      if leases ~= 0 and starts ~= 0 then return true end
      if leases == 0 then
        lease_ends(group_leases_key(queue, group))
      elseif opens then
        due(opens)
      end
    end
    if not more then return false end
    from = '(' .. groups[#groups]
  end
end

local controlled = smismember(K_QUEUE_CONTROLS, queues)
for q, queue in ipairs(queues) do
  local gate
  if controlled[q] == 1 then
    gate = queue_gate(queue)
    if gate.hint then due(gate.hint) end
  end
  if gate and gate.room == 0 then
    if gate.concurrency and redis.call('EXISTS', P_READY .. queue, P_SCHEDULED .. queue, groups_key(queue)) > 0 then
      lease_ends(P_LEASES .. queue)
    end
    if gate.opens then due(gate.opens) end
  else
    if names == nil then
      if redis.call('ZCARD', P_READY .. queue) > 0 then return { NOW, 1, '', schedules_version, stop } end
    else
      for _, name in ipairs(names) do
        if redis.call('ZCARD', ready_name_key(queue, name)) > 0 then return { NOW, 1, '', schedules_version, stop } end
      end
    end
    if group_work(queue, gate) then return { NOW, 1, '', schedules_version, stop } end
    local first = redis.call('ZRANGE', P_SCHEDULED .. queue, 0, 0, 'WITHSCORES')
    if first[2] then
      local at = tonumber(first[2])
      if at <= NOW then return { NOW, 1, '', schedules_version, stop } end
      due(at)
    end
  end
end
if ARGV[FIRST] ~= '' then
  redis.set_repl(redis.REPL_NONE)
  redis.call('HSET', K_WAITERS, ARGV[FIRST], ARGV[FIRST + 1])
end
return { NOW, 0, next_due and string.format('%d', next_due) or '', schedules_version, stop }
