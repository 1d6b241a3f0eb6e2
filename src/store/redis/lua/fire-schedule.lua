-- fireSchedule: fires slots of a schedule in one step (store.ts fireSchedule()): a compare-and-set
-- of its last_slot and the enqueue of its jobs. Only a schedule still as its scheduler read it
-- (kernel/schedules.ts fireMayProceed: the same version and last_slot, not paused) is fired, so of
-- any number of schedulers racing for a slot the first moves last_slot and the others find it
-- moved. The jobs go through enqueue_jobs (lib/enqueue-core.lua), enqueue.lua's own path: a slot's
-- unique key (cron:<id>:<slot>) held already gives its holder's id, and the jobs are delivered to
-- waiters and their queues woken as any enqueue's. With overlap 'skip', while the job of the last
-- fire (last_job_id) is unfinished (scheduled, ready or active: kernel/schedules.ts
-- UNFINISHED_STATES; a job purged or evicted has finished), the slots are passed over instead.
-- include: lib/prelude.lua, lib/namespace-check.lua, lib/groups.lua, lib/claim-core.lua, lib/deliver.lua, lib/change-job.lua, lib/enqueue-core.lua
-- KEYS, ARGV 1-4: the common layout (prelude.lua).
-- ARGV FIRST: the schedule's id; FIRST + 1, FIRST + 2: its version and last_slot as the fire was
--   planned from them; FIRST + 3: toSlot; then two per job, as enqueue_jobs reads them, none when
--   every due slot is passed over.
-- Returns: { 'fired', enqueue_jobs's first value (absent without jobs) }: last_slot is toSlot and
--   last_job_id the last job's; { 'overlap' }: last_slot is toSlot; or { 'stale', the schedule's
--   hash as it is (HGETALL: empty when it is gone) }: nothing written.
local id, to_slot = ARGV[FIRST], ARGV[FIRST + 3]
local key = P_SCHEDULE .. id
local row = redis.call('HMGET', key, 'version', 'last_slot', 'paused_at', 'overlap', 'last_job_id')
if not row[1] or row[3] or tonumber(row[1]) ~= tonumber(ARGV[FIRST + 1])
  or tonumber(row[2]) ~= tonumber(ARGV[FIRST + 2]) then
  return { 'stale', redis.call('HGETALL', key) }
end
if row[4] == 'skip' and row[5] then
  local state = redis.call('HGET', P_JOB .. row[5], 's')
  if state == 'scheduled' or state == 'ready' or state == 'active' then
    redis.call('HSET', key, 'last_slot', to_slot)
    return { 'overlap' }
  end
end
if #ARGV < FIRST + 4 then
  redis.call('HSET', key, 'last_slot', to_slot)
  return { 'fired' }
end
local results, last_id = enqueue_jobs(FIRST + 4)
redis.call('HSET', key, 'last_slot', to_slot, 'last_job_id', last_id)
deliver_to_waiters()
publish_wakes()
return { 'fired', results }
