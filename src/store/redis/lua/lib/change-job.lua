-- change-job: changes one job that has not started (scheduled or ready) where it stands: its
-- priority, run time, payload and maxAttempts (store.ts JobChange). For changeJobs
-- (change-jobs.lua), and for any script that moves a job waiting in line (a debounced enqueue that
-- pushes its job later). A script runs whole, so no claim comes between the look at the job's state
-- and the change: a job a claim took first is active, and left as it is.
-- change_job(id, priority, run_at, payload, max_attempts): each nil to keep the job's; priority,
--   payload and max_attempts as the text to store, run_at a number or its text (whole ms).
--   A new run time sets the state: ready at or before NOW, else scheduled (kernel/change-jobs.ts
--   stateAfterChange); without one the state stays (a due scheduled job is promoted by the next
--   claim, as ever). A new priority or run time moves the job's entry to its new place in line: its
--   queue's and its name's ready zsets, or its group's (add_ready, prelude.lua), or the scheduled
--   zset. A job made ready or scheduled wakes its queue's waiters as an enqueue does: the calling
--   script ends with publish_wakes (prelude.lua). A start deadline ('x') stays as it is, and so
--   does the job's entry in the deadlines zset (it is in line before and after).
-- Returns: 'ok'; 'not_found' (no job hash: an evicted job's id leaves the jobs index, forget_job);
--   'not_changeable' (active, completed or dead: nothing written).
local function change_job(id, priority, run_at, payload, max_attempts)
  local key = P_JOB .. id
  local job = redis.call('HMGET', key, 's', 'q', 'n', 'pr', 'ra', 'g')
  local state, queue, name, group = job[1], job[2], job[3], job[6] or nil
  if not queue then
    forget_job(id)
    return 'not_found'
  end
  if state ~= 'ready' and state ~= 'scheduled' then return 'not_changeable' end
  local fields = { 'u', NOW }
  local to_state = state
  if run_at then
    run_at = tonumber(run_at)
    to_state = run_at <= NOW and 'ready' or 'scheduled'
    fields[#fields + 1], fields[#fields + 2] = 'ra', string.format('%d', run_at)
  end
  if priority then fields[#fields + 1], fields[#fields + 2] = 'pr', priority end
  -- A scheduled job's place is its run time alone: a new priority there is only written down.
  if run_at or (priority and state == 'ready') then
    if state == 'ready' then
      remove_ready(queue, name, ready_member(job[5], id), group)
    else
      redis.call('ZREM', P_SCHEDULED .. queue, id)
    end
    if to_state == 'ready' then
      local woken = ready_queues[queue]
      add_ready(queue, name, priority or job[4], run_at or job[5], id, group)
      -- A job that was ready already gives the queue's waiters nothing new to claim.
      if state == 'ready' then ready_queues[queue] = woken end
    else
      add_scheduled(queue, run_at, id)
    end
    if state == 'ready' and to_state == 'scheduled' then unflag_ready_if_empty(queue) end
    if state == 'scheduled' and to_state == 'ready' and redis.call('EXISTS', P_SCHEDULED .. queue) == 0 then
      redis.call('SREM', K_HAS_SCHEDULED, queue)
    end
    if to_state ~= state then fields[#fields + 1], fields[#fields + 2] = 's', to_state end
  end
  if payload then fields[#fields + 1], fields[#fields + 2] = 'p', payload end
  if max_attempts then fields[#fields + 1], fields[#fields + 2] = 'ma', max_attempts end
  redis.call('HSET', key, unpack(fields))
  return 'ok'
end
