-- deliver: hands the jobs an enqueue made ready to workers waiting for them (waitForWork with a claim), so a
-- waiting worker starts them without a claim of its own: the enqueue's one AOF write and fsync
-- covers their leases too, and the jobs travel with the wake-up. Included by enqueue.lua and
-- fire-schedule.lua, after lib/claim-core.lua (its claim_jobs); they call deliver_to_waiters
-- before publish_wakes.
-- A waiter is registered by wait-for-work.lua and ended by wait-for-work-end.lua or by its delivery; its
-- registration (K_WAITERS, JSON): c its store's delivery channel, l limit, m leaseMs, w workerId,
-- t lease token base (fresh per wait), q its queues in order, n the only names it claims (absent:
-- every name; a waiter none of whose names is among the new jobs is handed nothing).
-- Waiters' channels are shard channels (SSUBSCRIBE, SPUBLISH): under the namespace's hash tag, so
-- on Redis Cluster they live on the node that runs this script, and PUBSUB SHARDNUMSUB there
-- counts every subscriber a channel has. (An ordinary channel's NUMSUB counts one node's only.)
-- Liveness: a waiter whose channel has no subscriber (its process died, or closed its store) is
-- dropped, never handed jobs.
-- Publishes on a waiter's channel: '<waiter id> <JSON array of jobs, as job_reply gives them>', or
-- when that would pass DELIVERY_MAX_BYTES, '<waiter id> #<id>,<id>...' (the store reads them): a
-- subscriber whose output buffer passes Redis's pub/sub limit (32 MB by default) is disconnected.
-- Waiter writes are neither persisted nor replicated (REPL_NONE): they describe connections.
-- A delivered job holds a delivery lease of DELIVERY_LEASE_MS at most (the waiter's own lease if
-- shorter; src/store/store.ts has the same constant) and is marked delivered ('dv'), until its
-- waiter takes it (renew.lua with delivered) before it starts it: one a frozen or stalled waiter never
-- takes goes back in line with its attempt given back (recover-expired.lua).

local DELIVERY_MAX_BYTES = 1000000
local DELIVERY_LEASE_MS = 2000

-- Queues of this script's ready jobs that may still hold some after the deliveries.
local function undelivered_ready_queues()
  for queue in pairs(ready_queues) do
    if not holds_ready(queue) then ready_queues[queue] = nil end
  end
end

local function drop_waiter(id)
  redis.set_repl(redis.REPL_NONE)
  redis.call('HDEL', K_WAITERS, id)
  redis.set_repl(redis.REPL_ALL)
end

local function deliver_to_waiters()
  if next(ready_queues) == nil or redis.call('HLEN', K_WAITERS) == 0 then return end
  local entries = redis.call('HGETALL', K_WAITERS)
  for i = 1, #entries, 2 do
    local id, waiter = entries[i], cjson.decode(entries[i + 1])
    local watches = false
    for _, queue in ipairs(waiter.q) do
      if ready_queues[queue] then watches = true end
    end
    if watches then
      if redis.call('PUBSUB', 'SHARDNUMSUB', waiter.c)[2] == 0 then
        drop_waiter(id)
      else
        local jobs = claim_jobs(waiter.l, math.min(waiter.m, DELIVERY_LEASE_MS), waiter.w, waiter.t, waiter.q, true,
          waiter.n)
        if #jobs > 0 then
          drop_waiter(id)
          local message = cjson.encode(jobs)
          if #message > DELIVERY_MAX_BYTES then
            local ids = {}
            for n, job in ipairs(jobs) do ids[n] = job[1] end
            message = '#' .. table.concat(ids, ',')
          end
          redis.call('SPUBLISH', waiter.c, id .. ' ' .. message)
        end
      end
    end
  end
  undelivered_ready_queues()
end
