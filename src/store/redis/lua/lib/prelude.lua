-- prelude: included first by every Ferry script (its `-- include:` line, resolved by
-- scripts/embed-assets.mjs). It names the key layout every script shares, so no script spells a
-- key name. JOB_FIELDS below is read from here at embed time, so the store's decoder has the same
-- list; so are the key names (the strings appended to ROOT below, in order), which keys.ts's
-- scriptKeys then scriptPrefixes must equal (tests/store/redis-keys.test.ts).
-- KEYS 1: the id counter, named only so that a cluster client sends the call to the node of the
--   namespace's slot (FCALL and EVALSHA route by their keys). Every other key is formed here from ROOT, and is
--   in the same slot: all are under the namespace's hash tag.
-- ARGV 1: ROOT, the namespace's common start of every key name (keys.ts: ferry:{namespace}:).
--   The names were sent as 17 arguments of every call before: forming them here costs the server
--   less than reading them did (1.3 µs against 1.9 µs per call, without AOF), and spares the
--   client their encoding (ioredis: 11 µs a command of 32 arguments, 2.4 µs one of 4). With the
--   AT below, the enqueue script's own time fell 5-14 % (INFO commandstats, AOF always, 11 runs)
--   and a serial enqueue was about 1.08x as fast (median of 11 interleaved runs of 60-100 rounds
--   of 100 against the old scripts, load 2-5 on 2 cores, 2026-12-02; old against old differed by
--   5 % either way).
-- The keys (KEYS[1] and the K_ names below):
--   id counter (string, INCR)          jobs index (zset id -> id, for listJobs)
--   active (zset leaseExpiresAt -> id) queues (set of queue names)
--   unique keys (hash uniqueKey -> id) stop (string, epoch ms)   schema version (string)
--   has-ready: queues whose ready zsets may hold jobs (set; their own, or their groups': below);
--   has-scheduled: queues whose scheduled zset may hold jobs (set). They let a claim over many queues skip the empty ones with one
--   SMISMEMBER each: a flag is set whenever a job goes in, and cleared when a claim or a cancel
--   finds the zset empty. A flagged queue is in the queues set: only an enqueue adds a queue
--   there, and nothing takes one out (lib/enqueue-core.lua relies on it).
--   waiters (hash waiter id -> its registration as JSON: deliver.lua). Never persisted nor
--   replicated (written under REPL_NONE): a waiter lives only as long as its connection.
--   instance marker (string: a random id that migrate.lua writes once; checked below)
--   queue controls: the queues with a setting (set of queue names: control.lua), each with its
--   hash (below). A claim looks them up with one SMISMEMBER (queue_gate).
--   deadlines (zset expiresAt -> id): the jobs with a start deadline ('x') that have not started,
--   ready or scheduled, in every queue: what a claim and the recoverer's sweep end once their
--   deadline passes (expire_jobs below). A job goes in when it enters ready or scheduled with an
--   'x' and leaves when it is leased, cancelled or ended; a job without 'x' never touches it.
--   While it may hold jobs, the has-scheduled set holds DEADLINES_FLAG too (below), which no queue
--   name can be: a claim reads it with the has-scheduled lookup it makes anyway, so in a store
--   without deadlines a claim sends no command more for them.
--   has-groups: the queues whose groups zset may hold groups (set), and has-ready holds
--   GROUPS_FLAG while it may hold queues (below: grouped ready jobs).
--   group cursors (hash queue -> the group its claims served last, '' for the jobs without one:
--   lib/claim-core.lua's rotation).
--   schedules (zset of schedule ids, score 0: in byte order, ZRANGE) and schedules version (string:
--   the store's schedules version, which every change of a schedule moves: schedules.lua; absent
--   before the first, which reads as 0).
--   kept (zset of the finished jobs with their own keepForMs ('k'), scored by when that runs out:
--   finishedAt + keepForMs; prune.lua deletes from its start).
--   workers (hash worker id -> its record as JSON: heartbeat.lua) and worker expiries (zset
--   expiresAt -> worker id): the registry of running workers, read by workers.lua; throughput
--   minutes (zset minute -> minute): the minutes that have a throughput hash (below).
-- The prefixes (P_ names), completed by an id or a queue name: job (hash), ready (zset), scheduled
--   (zset runAt -> id), completed (zset finishedAt -> id), dead (zset finishedAt -> id), queue
--   control (hash of a queue with a setting: paused_at, paused_by, pause_reason, concurrency,
--   rate_limit, rate_per_ms, group_concurrency, group_rate_limit, group_rate_per_ms,
--   keep_completed_ms, keep_dead_ms, keep_completed_count, keep_dead_count, each absent when null;
--   no hash when it has none; and rate_opens_at, a claim's hint for waiters:
--   claim-core.lua), leases (zset leaseExpiresAt -> id: the active jobs of a queue with a
--   concurrency limit, kept only while it has one: track_lease below; with ' ' and a group, those
--   of the group while the queue has a group concurrency limit: track_group_lease); expired (set
--   of ids: a queue's dead jobs that were never started by their start deadline, for stats; an id
--   leaves it when its job is retried or purged); group-ready and groups (grouped ready jobs,
--   below); starts and start-groups (rate limits' logs of starts: window_room below); schedule
--   (hash of one schedule, by its id: the columns of kernel/schedules.ts's ScheduleRow, each absent
--   when null; schedules.lua, fire-schedule.lua); kept (zset finishedAt -> id, by queue then ' '
--   and a state: the finished jobs of the queue with their own keepForMs, kept_key below); throughput
--   (hash of one minute, by its epoch ms: 'c <queue>' and 'f <queue>' -> the jobs completed and the
--   attempts failed, expiring a day after the minute: heartbeat.lua); and the
--   wake channel (a shard channel: SPUBLISH,
--   so on Redis Cluster it stays on the namespace's node).
-- ARGV 2: now (epoch ms), or '' to use the server's clock (TIME), one clock for every host.
-- ARGV 3: the instance marker the store read when it opened ('' only for migrate.lua at open).
-- ARGV 4: '1' when the store was opened with allowEviction (the server may evict keys), else ''.
-- The script's own ARGV start at FIRST (5).
-- Flags (a script's `-- flags:` line, for its function: scripts/embed-assets.mjs): allow-oom runs
--   it when Redis is out of memory (maxmemory reached under noeviction). Without the flag a
--   function is refused whole then, where a script failed at its first command that could grow
--   memory; so every script but enqueue.lua, fire-schedule.lua, migrate.lua and change-jobs.lua,
--   which add jobs, keys or larger payloads, has it: workers settle and claim, schedulers read the schedules, and purges free
--   memory, on a full Redis (docs/backends.md).
-- Job hash fields: q queue, n name, p payload (JSON text), s state, pr priority, ra runAt,
--   a attempts, ma maxAttempts, to timeoutMs, uk uniqueKey, lt lease token, le leaseExpiresAt,
--   w workerId, e lastError (JSON), r result (JSON), c createdAt, u updatedAt, f finishedAt, dv 1
--   while an active job was delivered to a waiter that has not taken it (deliver.lua), lq 1 while
--   its lease is in its queue's leases zset (its queue has a concurrency limit), lg 1 while it is in
--   its group's (its queue has a group concurrency limit), g group, x
--   expiresAt (the start deadline; a dead job keeps it unless retried: retry.lua), m meta (JSON
--   text of the schedule slot the job was fired for, its own backoff and keepForMs: kernel/
--   job-meta.ts; only ever returned, and absent for a plain job, which pays one absent field of each read: a plain
--   enqueue of one job cost 165,900 redis-server instructions against 167,300 before, a claim of
--   one 233,700 against 233,000, a settle 132,200 against 132,900, within the runs' spread;
--   callgrind, 300 calls each, medians of 3 runs, 2026-12-03), uu the transition that frees its
--   unique key ('finished' or 'started'; absent: the purge) and ux a throttle's end (epoch ms:
--   docs/uniqueness.md); both absent for a job without a key. pg progress (JSON text) and lo logs
--   (a JSON array of the kept lines), absent until a handler reports one: written by renew.lua and
--   settle-core.lua only, under the lease token (docs/progress.md). Of an active
--   job, u is when its lease was last set (claim, renewal, take): le - u is the lease's length.
--   A null is an absent field. Left out to keep an enqueue cheap: a absent is 0 attempts, u absent
--   is createdAt (never updated); the id is in the key (hashes of layout 1 may still hold 'id').
--   Every job has its queue: a hash without 'q' is no job (forget_job, below).
-- Ready zsets: score -priority, member the zero-padded runAt then the zero-padded id, so ZPOPMIN
--   takes the highest priority, then the earliest runAt, then the lowest id (equal scores sort by
--   member). Queue names ([A-Za-z0-9._:-]) and ids (digits) are checked by the store before they
--   reach a key. Each ready job is in two: its queue's (P_READY .. queue) and its queue's for its
--   name (P_READY .. queue .. ' ' .. name: ready_name_key; names have a queue's characters, so
--   never a space), with the same entry. A claim with a names filter reads the first entries of
--   each name it asks for and merges them, whatever stands ahead in the queue (claim-core.lua).
--   A ready job with a group is in its group's two instead (group-ready: add_ready below), so that
--   a claim can go round the groups.
-- What one call is about. Set by begin(), which every script runs first (the generated code calls
-- it: scripts/embed-assets.mjs), so that these definitions can be made once, when the library of
-- functions is loaded, rather than on every call (redis-scripts.ts).
local KEYS, ARGV, ROOT, NOW, INSTANCE, EVICTION_ALLOWED
local K_ID, K_JOBS, K_ACTIVE, K_QUEUES, K_UNIQUE, K_STOP, K_SCHEMA, K_HAS_READY, K_HAS_SCHEDULED, K_WAITERS, K_INSTANCE
local K_QUEUE_CONTROLS, K_DEADLINES, K_HAS_GROUPS, K_GROUP_CURSORS, K_SCHEDULES, K_SCHEDULES_VERSION, K_KEPT
local K_WORKERS, K_WORKER_EXPIRIES, K_THROUGHPUT_MINUTES
local P_JOB, P_READY, P_SCHEDULED, P_COMPLETED, P_DEAD, P_QUEUE_CONTROL, P_LEASES, P_EXPIRED, P_GROUP_READY, P_GROUPS
local P_STARTS, P_START_GROUPS, P_SCHEDULE, P_KEPT, P_THROUGHPUT, CHANNEL
-- Wake-ups to publish, and the queues flagged, by this call (publish_wakes, flag_ready below).
local ready_queues, due_at, flagged_ready, flagged_scheduled, flagged_deadlines, flagged_groups
local FIRST = 5

local function begin(keys, argv)
  KEYS, ARGV = keys, argv
  -- The names stay from the call before when it was about the same namespace (a library's calls
  -- share these locals): forming them took 12,000 of an enqueue's 200,000 instructions (callgrind).
  if argv[1] ~= ROOT then
    ROOT = argv[1]
    K_ID, K_JOBS, K_ACTIVE, K_QUEUES, K_UNIQUE, K_STOP, K_SCHEMA, K_HAS_READY, K_HAS_SCHEDULED, K_WAITERS,
      K_INSTANCE, K_QUEUE_CONTROLS, K_DEADLINES, K_HAS_GROUPS, K_GROUP_CURSORS, K_SCHEDULES,
      K_SCHEDULES_VERSION, K_KEPT = ROOT .. 'id', ROOT .. 'jobs', ROOT .. 'active', ROOT .. 'queues',
      ROOT .. 'unique', ROOT .. 'stop', ROOT .. 'schema', ROOT .. 'has-ready', ROOT .. 'has-scheduled',
      ROOT .. 'waiters', ROOT .. 'instance', ROOT .. 'queue-controls', ROOT .. 'deadlines', ROOT .. 'has-groups',
      ROOT .. 'group-cursors', ROOT .. 'schedules', ROOT .. 'schedules-version', ROOT .. 'kept'
    K_WORKERS, K_WORKER_EXPIRIES, K_THROUGHPUT_MINUTES = ROOT .. 'workers', ROOT .. 'worker-expiries',
      ROOT .. 'throughput-minutes'
    P_JOB, P_READY, P_SCHEDULED, P_COMPLETED, P_DEAD, P_QUEUE_CONTROL, P_LEASES, P_EXPIRED, P_GROUP_READY,
      P_GROUPS, P_STARTS, P_START_GROUPS, P_SCHEDULE, P_KEPT, P_THROUGHPUT, CHANNEL =
      ROOT .. 'job:', ROOT .. 'ready:', ROOT .. 'scheduled:', ROOT .. 'completed:', ROOT .. 'dead:',
      ROOT .. 'queue-control:', ROOT .. 'leases:', ROOT .. 'expired:', ROOT .. 'group-ready:', ROOT .. 'groups:',
      ROOT .. 'starts:', ROOT .. 'start-groups:', ROOT .. 'schedule:', ROOT .. 'kept:', ROOT .. 'throughput:',
      ROOT .. 'wake'
  end
  NOW = tonumber(argv[2])
  if NOW == nil then
    local time = redis.call('TIME')
    NOW = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
  end
  INSTANCE, EVICTION_ALLOWED = argv[3], argv[4] == '1'
  -- flagged_groups: a table once this call has flagged a queue's groups (flag_groups), else nil.
  ready_queues, due_at, flagged_ready, flagged_scheduled, flagged_deadlines, flagged_groups = {}, {}, {}, {}, false, nil
end

-- Whether the namespace is still the one the store opened: nil when it is, else the error to
-- answer. Its instance marker missing, the server was emptied (FLUSHALL, a restart without
-- persistence) or the namespace's keys deleted; another marker, it was emptied and a new process
-- has since started a fresh namespace there. Either way the jobs this store knew of are gone, and
-- any write would recreate the namespace under running workers: the script writes nothing, wakes
-- the waiting workers ('l') so that their next call finds out too, and answers
-- 'FERRY namespace_lost missing|replaced' (RedisStore makes it a StoreUnavailableError that is
-- not retryable: workers stop). Under an eviction policy (allowEviction) the marker may have been
-- evicted alone: while other keys of the namespace remain, it is put back instead.
local function namespace_lost()
  local instance = redis.call('GET', K_INSTANCE)
  if instance == INSTANCE then return nil end
  if instance == false and EVICTION_ALLOWED and redis.call('EXISTS', K_SCHEMA, K_ID, K_JOBS, K_QUEUES) > 0 then
    redis.call('SET', K_INSTANCE, INSTANCE)
    return nil
  end
  redis.call('SPUBLISH', CHANNEL, 'l')
  return redis.error_reply('FERRY namespace_lost ' .. (instance and 'replaced' or 'missing'))
end


-- unpack() of a list longer than Lua's C stack allows (LUAI_MAXCSTACK, 8,000) fails with 'too many
-- results to unpack': a caller-sized list goes to a command in pieces of at most UNPACK_MAX.
local UNPACK_MAX = 1000

-- SMISMEMBER of a caller-sized list, in pieces of UNPACK_MAX: { 1 | 0, ... } in order. `extra`:
-- one more member to look up in the first piece, ahead of the others (the caller's list is left
-- as it is), its answer the second value (0 without it).
local function smismember(key, members, extra)
  local flags, found, from = {}, 0, 1
  if extra then
    from = math.min(UNPACK_MAX - 1, #members) + 1
    local part = redis.call('SMISMEMBER', key, extra, unpack(members, 1, from - 1))
    found = part[1]
    for n = 2, #part do flags[n - 1] = part[n] end
  end
  for first = from, #members, UNPACK_MAX do
    local part = redis.call('SMISMEMBER', key, unpack(members, first, math.min(first + UNPACK_MAX - 1, #members)))
    for n = 1, #part do flags[first + n - 1] = part[n] end
  end
  return flags, found
end

-- Rate limits: a sliding-window log of starts. A queue with a rate or a group rate (control.lua
-- keeps the settings) logs every job a claim leases (a delivery too) in starts:<queue> (zset lease
-- token -> the claim's time: a token is unique per start, an id is not, as a job may start again
-- within the window), and a job with a group in starts:<queue> <group> too, whichever of the two
-- limits is set (as the SQL stores keep one row per start); start-groups:<queue> (zset group -> its
-- latest start) names the groups' logs, so that those whose every start has left the window are
-- deleted (record_start) and control.lua finds them all. A start at s counts while NOW - s < perMs.
-- How many more starts the window of `limit` per `per_ms` whose log is `key` allows now; when none,
-- also when it lets the next one in: its limit-th newest counted start + per_ms (kernel/
-- queue-control.ts windowOpensAt).
local function group_starts_key(queue, group)
  return P_STARTS .. queue .. ' ' .. group
end
local function window_room(key, limit, per_ms)
  local since = '(' .. string.format('%d', NOW - per_ms)
  local counted = redis.call('ZCOUNT', key, since, '+inf')
  if counted < limit then return limit - counted end
  local start = redis.call('ZREVRANGEBYSCORE', key, '+inf', since, 'WITHSCORES', 'LIMIT', limit - 1, 1)
  return 0, tonumber(start[2]) + per_ms
end

-- Queue control of a queue in the queue controls set (control.lua keeps it), as a claim reads it:
-- its settings (one HMGET) and `room`, how many of its jobs a claim may take now: 0 while it is
-- paused; with a concurrency limit, the limit less its jobs holding a live lease (expiry after
-- now: one that ran out no longer counts); with a rate, no more than its window allows, and then
-- `opens`, when the window lets the next start in (rate_room 0); nil when nothing limits it. A
-- queue not in the set costs its claim nothing more than its SMISMEMBER.
-- The gate's other fields: concurrency (its leases are tracked: track_lease), rate_room,
-- group_concurrency, group_rate_limit and group_rate_per_ms (lib/groups.lua), logs (its starts are
-- logged), window (how long a start is kept: the longer of its rate windows), hint (rate_opens_at:
-- when a claim last saw a rate window it was held by let the next start in).
local function queue_gate(queue)
  local control = redis.call('HMGET', P_QUEUE_CONTROL .. queue, 'paused_at', 'concurrency', 'rate_limit',
    'rate_per_ms', 'group_concurrency', 'group_rate_limit', 'group_rate_per_ms', 'rate_opens_at')
  local rate_limit, rate_per_ms = tonumber(control[3]), tonumber(control[4])
  local gate = { concurrency = tonumber(control[2]), group_concurrency = tonumber(control[5]),
    group_rate_limit = tonumber(control[6]), group_rate_per_ms = tonumber(control[7]), hint = tonumber(control[8]) }
  gate.rate_limit, gate.rate_per_ms = rate_limit, rate_per_ms
  if rate_limit or gate.group_rate_limit then
    gate.logs = true
    gate.window = math.max(rate_per_ms or 0, gate.group_rate_per_ms or 0)
  end
  if control[1] then
    gate.room = 0
    return gate
  end
  if gate.concurrency then
    local live = redis.call('ZCOUNT', P_LEASES .. queue, '(' .. string.format('%d', NOW), '+inf')
    gate.room = math.max(gate.concurrency - live, 0)
  end
  -- A queue at its concurrency limit is woken when a lease ends: its window is not looked at.
  if rate_limit and gate.room ~= 0 then
    gate.rate_room, gate.opens = window_room(P_STARTS .. queue, rate_limit, rate_per_ms)
    if gate.room == nil or gate.rate_room < gate.room then gate.room = gate.rate_room end
  end
  return gate
end

-- Under an eviction policy (allowEviction), Redis may have dropped a job's hash while an index
-- still names it: a ready, scheduled, active, completed or dead zset, the jobs index, the unique
-- keys. A script that meets such an id takes it out of the index it found it in, and calls this,
-- which takes it out of the jobs index; it never writes to the job's hash, which would recreate a
-- job without its fields. (DEL: a hash without 'q' that an older Ferry recreated so goes too.)
local function forget_job(id)
  redis.call('ZREM', K_JOBS, id)
  redis.call('DEL', P_JOB .. id)
end

-- Frees a job's unique key, if the job still holds it (the hash of unique keys names it): at the
-- transition its mode ('uu') names, in the script that makes it. Once free, the key is the next
-- enqueue's, and never its old job's again (a retried dead job does not take it back).
local function free_unique_key(id, unique_key)
  if redis.call('HGET', K_UNIQUE, unique_key) == id then redis.call('HDEL', K_UNIQUE, unique_key) end
end

-- At a job's end (completed, or dead: failed, cancelled, expired, out of its lease): a key that
-- frees when its job finishes or starts frees now. For the scripts that do not read the job's
-- 'uu' and 'uk' already; a job without them costs one HMGET of two absent fields.
local function free_unique_key_at_end(key, id)
  local unique = redis.call('HMGET', key, 'uu', 'uk')
  if unique[1] and unique[2] then free_unique_key(id, unique[2]) end
end

-- A job as scripts return it (claim, listJobs; getJob reads the same fields): its id, then these
-- fields in this order, false (nil) where absent. redis-store.ts reads this list from this line.
local JOB_FIELDS = { 'q', 'n', 'p', 's', 'pr', 'ra', 'a', 'ma', 'to', 'uk', 'lt', 'le', 'w', 'e', 'r', 'c', 'u', 'f', 'g', 'x', 'm', 'pg', 'lo' }
-- Positions in a job reply (the id is 1). Filled here, in plain Lua: a library of functions is
-- loaded where no global but redis is defined (setmetatable, which filled it at the first look-up
-- before, is not), and there this runs once, at load.
local AT = {}
for n = 1, #JOB_FIELDS do AT[JOB_FIELDS[n]] = n + 1 end

local function job_reply(key, id)
  local job = redis.call('HMGET', key, unpack(JOB_FIELDS))
  table.insert(job, 1, id)
  return job
end

local function ready_member(run_at, id)
  return string.format('%016d%016d', math.max(tonumber(run_at), 0), tonumber(id))
end

-- A job's score and member in its queue's ready zset: the one place that spells the claim order.
-- The score is -priority, negated as text: a number argument of redis.call is formatted with
-- %.17g (Redis 7.0), which cost more than the rest of a ZADD (callgrind, lib/enqueue-core.lua's header).
-- Priorities are integers the store wrote ('0', '-5'), so the text is the same as the number's.
local function ready_entry(priority, run_at, id)
  priority = tostring(priority)
  local score = string.byte(priority) == 45 and string.sub(priority, 2) or '-' .. priority
  return score, ready_member(run_at, id)
end

local function id_of_member(member)
  return string.match(member, '^0*(%d+)$', 17)
end

-- Grouped ready jobs (a job with a group, 'g', that is ready): not in the queue's ready zsets but
-- in its group's, so that a claim can go round the groups (lib/groups.lua): group-ready:<queue>
-- <group> (every name) and group-ready:<queue>/<name> <group> (one name), with the same entries
-- as the ready zsets, and the groups that have some in groups:<queue> and groups:<queue>/<name>
-- (zsets of score 0: in byte order, ZRANGEBYLEX). Queue names and job names hold neither '/' nor
-- a space, so no two of these keys are the same whatever the group (1-255 characters of any kind).
-- A queue with grouped ready jobs is in the has-groups set, and has-ready holds GROUPS_FLAG while
-- that set may hold queues: a claim reads it in the SMISMEMBER of has-ready it makes anyway, so in
-- a store without grouped ready jobs it sends no command more for them. A queue whose ready jobs
-- all have no group keeps today's layout, order and cost.
local GROUPS_FLAG = '+groups'
local function group_ready_key(queue, group, name)
  if name then return P_GROUP_READY .. queue .. '/' .. name .. ' ' .. group end
  return P_GROUP_READY .. queue .. ' ' .. group
end
local function groups_key(queue, name)
  if name then return P_GROUPS .. queue .. '/' .. name end
  return P_GROUPS .. queue
end

-- Whether a queue may hold ready jobs, with a group or without.
local function holds_ready(queue)
  return redis.call('EXISTS', P_READY .. queue, P_GROUPS .. queue) > 0
end

-- Wake-ups, published once per queue at the end of a script (publish_wakes): 'r<queue>' when a
-- job became ready, 's<runAt> <queue>' for the earliest new scheduled job of a queue.
local function wake_ready(queue)
  ready_queues[queue] = true
end
local function wake_due(queue, run_at)
  if due_at[queue] == nil or run_at < due_at[queue] then due_at[queue] = run_at end
end
-- Whether a queue's waiters could claim none of its jobs now (it is paused, or at its
-- concurrency limit or its rate): publish_wakes sends them nothing, which would only make them
-- wait again, once per enqueue; what frees the queue (a resume, a limit raised, a lease ended)
-- wakes them. A queue held by its rate only says when its window opens: its waiters are sent
-- that time instead ('s'), as for a scheduled job, since nothing else will wake them then.
-- `controls`: whether any queue has a setting, one EXISTS per script that wakes anybody.
local function closed_queue(controls, queue)
  if not controls or redis.call('SISMEMBER', K_QUEUE_CONTROLS, queue) == 0 then return false end
  local gate = queue_gate(queue)
  return gate.room == 0, gate.opens
end
local function publish_wakes()
  if next(ready_queues) == nil and next(due_at) == nil then return end
  local controls = redis.call('EXISTS', K_QUEUE_CONTROLS) == 1
  for queue in pairs(ready_queues) do
    local closed, opens = closed_queue(controls, queue)
    if not closed then
      redis.call('SPUBLISH', CHANNEL, 'r' .. queue)
    elseif opens then
      redis.call('SPUBLISH', CHANNEL, 's' .. string.format('%d', opens) .. ' ' .. queue)
    end
  end
  for queue, at in pairs(due_at) do
    local closed, opens = closed_queue(controls, queue)
    if not closed or opens then
      redis.call('SPUBLISH', CHANNEL, 's' .. string.format('%d', math.max(at, opens or at)) .. ' ' .. queue)
    end
  end
end

-- A limited queue's leases zset follows its active jobs' leases: a job's lease goes in when it is
-- taken, moves when it is renewed, and leaves when the job stops being active. Marked 'lq' on the
-- job, so the scripts that end or move a lease know, from the fields they read anyway, whether
-- there is an entry to keep: a queue without a limit costs them nothing.
local function track_lease(key, queue, id, expires_at)
  redis.call('ZADD', P_LEASES .. queue, expires_at, id)
  redis.call('HSET', key, 'lq', 1)
end

-- A tracked job stops being active. Its queue may take another job now: its waiters are woken,
-- in every process, if it holds any. (An HDEL of its own: in the HDEL of the lease's fields, the
-- field was looked for in every job's hash, tracked or not.)
local function untrack_lease(key, queue, id)
  redis.call('ZREM', P_LEASES .. queue, id)
  redis.call('HDEL', key, 'lq')
  if redis.call('EXISTS', P_READY .. queue, P_SCHEDULED .. queue, P_GROUPS .. queue) > 0 then wake_ready(queue) end
end

-- The same for a group concurrency limit: leases:<queue> <group> holds the leases of the active
-- jobs of that group while the queue has a group concurrency limit, and 'lg' marks them.
local function group_leases_key(queue, group)
  return P_LEASES .. queue .. ' ' .. group
end
local function track_group_lease(key, queue, group, id, expires_at)
  redis.call('ZADD', group_leases_key(queue, group), expires_at, id)
  redis.call('HSET', key, 'lg', 1)
end
local function untrack_group_lease(key, queue, group, id)
  redis.call('ZREM', group_leases_key(queue, group), id)
  redis.call('HDEL', key, 'lg')
  if redis.call('EXISTS', P_GROUPS .. queue, P_SCHEDULED .. queue) > 0 then wake_ready(queue) end
end

-- Flags a queue as holding ready jobs (once per script) and wakes its waiters. Returns SADD's
-- reply, 0 when the flag was set already, nil when this script had set it.
local function flag_ready(queue)
  local added
  if not flagged_ready[queue] then
    flagged_ready[queue] = true
    added = redis.call('SADD', K_HAS_READY, queue)
  end
  wake_ready(queue)
  return added
end

-- Flags a queue as holding grouped ready jobs (once per script), and the store (GROUPS_FLAG).
local function flag_groups(queue)
  if flagged_groups == nil then
    flagged_groups = {}
  elseif flagged_groups[queue] then
    return
  end
  flagged_groups[queue] = true
  redis.call('SADD', K_HAS_GROUPS, queue)
  if not flagged_groups[GROUPS_FLAG] then
    flagged_groups[GROUPS_FLAG] = true
    redis.call('SADD', K_HAS_READY, GROUPS_FLAG)
  end
end

-- Clears the flags of a queue whose groups zset is empty (and the store's, with the last queue).
local function unflag_groups(queue)
  redis.call('SREM', K_HAS_GROUPS, queue)
  if flagged_groups then flagged_groups[queue] = nil end
  if redis.call('EXISTS', K_HAS_GROUPS) == 0 then
    redis.call('SREM', K_HAS_READY, GROUPS_FLAG)
    if flagged_groups then flagged_groups[GROUPS_FLAG] = nil end
  end
end

-- Clears the has-ready flag of a queue left without ready jobs, of either kind.
local function unflag_ready_if_empty(queue)
  if not holds_ready(queue) then redis.call('SREM', K_HAS_READY, queue) end
end

-- The ready zset of a queue's jobs of one name (see the ready zsets above).
local function ready_name_key(queue, name)
  return P_READY .. queue .. ' ' .. name
end

-- Adds a grouped ready job's entry to its group's zsets and its group to the queue's groups zsets.
local function add_group_ready(queue, name, group, score, member)
  redis.call('ZADD', group_ready_key(queue, group), score, member)
  redis.call('ZADD', group_ready_key(queue, group, name), score, member)
  redis.call('ZADD', groups_key(queue), 0, group)
  redis.call('ZADD', groups_key(queue, name), 0, group)
  flag_groups(queue)
end

-- After a grouped ready job's entry left its group's zset (`name`: its name's too), the group leaves
-- the groups zsets it no longer has jobs for, and a queue left without groups loses its flag.
-- Returns whether the group has no ready job left.
local function group_entry_gone(queue, group, name)
  if name and redis.call('EXISTS', group_ready_key(queue, group, name)) == 0 then
    redis.call('ZREM', groups_key(queue, name), group)
  end
  if redis.call('EXISTS', group_ready_key(queue, group)) == 1 then return false end
  redis.call('ZREM', groups_key(queue), group)
  if redis.call('EXISTS', groups_key(queue)) == 0 then unflag_groups(queue) end
  return true
end

-- Adds a job to its queue's ready zsets (the queue's and its name's; its group's when it has one:
-- `group`, its 'g' or nil), flagging the queue.
local function add_ready(queue, name, priority, run_at, id, group)
  local score, member = ready_entry(priority, run_at, id)
  if group then
    add_group_ready(queue, name, group, score, member)
  else
    redis.call('ZADD', P_READY .. queue, score, member)
    redis.call('ZADD', ready_name_key(queue, name), score, member)
  end
  flag_ready(queue)
end

-- Takes a ready job's entry out of both its zsets (its group's, with a group).
local function remove_ready(queue, name, member, group)
  if group then
    redis.call('ZREM', group_ready_key(queue, group), member)
    redis.call('ZREM', group_ready_key(queue, group, name), member)
    group_entry_gone(queue, group, name)
  else
    redis.call('ZREM', P_READY .. queue, member)
    redis.call('ZREM', ready_name_key(queue, name), member)
  end
end

-- run_at: a number, or its text (lib/enqueue-core.lua). Returns as flag_ready does, for the has-scheduled flag.
local function add_scheduled(queue, run_at, id)
  redis.call('ZADD', P_SCHEDULED .. queue, run_at, id)
  local added
  if not flagged_scheduled[queue] then
    flagged_scheduled[queue] = true
    added = redis.call('SADD', K_HAS_SCHEDULED, queue)
  end
  wake_due(queue, tonumber(run_at))
  return added
end

-- Start deadlines. A job with one ('x') is in the deadlines zset exactly while it is ready or
-- scheduled. Every caller reads 'x' with the fields it reads anyway and calls these only when it
-- is there, so a job without a deadline costs no command more anywhere.
-- DEADLINES_FLAG, in the has-scheduled set: the deadlines zset may hold jobs. Set (once per
-- script) whenever a job goes in; cleared by a claim that finds the zset empty (expire_flagged).
-- Queue names have no '+'.
local DEADLINES_FLAG = '+deadlines'
local function flag_deadlines()
  if not flagged_deadlines then
    flagged_deadlines = true
    redis.call('SADD', K_HAS_SCHEDULED, DEADLINES_FLAG)
  end
end
local function track_deadline(id, expires_at)
  redis.call('ZADD', K_DEADLINES, expires_at, id)
  flag_deadlines()
end
local function untrack_deadline(id)
  redis.call('ZREM', K_DEADLINES, id)
end

-- The last error of a job not started by its start deadline: kernel/jobs.ts EXPIRED_ERROR as JSON
-- (tests/store/redis-deadlines.test.ts holds them equal).
local EXPIRED_ERROR = '{"kind":"expired","message":"its start deadline (expiresAt) passed before it could start"}'

-- Finished jobs: a completed or dead job is in its queue's completed or dead zset (finishedAt ->
-- id), which purge, stats, retry and prune read; a job with its own keepForMs ('k', which
-- lib/enqueue-core.lua copies from its meta) is in its queue's kept zset of that state instead
-- (kept_key), and in the kept zset by when its own time runs out (K_KEPT). So a queue's retention
-- (prune.lua) reads only the jobs it governs, oldest first, and a job kept longer than its queue's
-- age never stands in front of them. `keep`: the job's 'k' (false or nil for none).
local function kept_key(queue, state)
  return P_KEPT .. queue .. ' ' .. state
end
local function finished_key(queue, state, keep)
  if keep then return kept_key(queue, state) end
  return (state == 'dead' and P_DEAD or P_COMPLETED) .. queue
end
local function add_finished(queue, id, state, keep)
  redis.call('ZADD', finished_key(queue, state, keep), NOW, id)
  if keep then redis.call('ZADD', K_KEPT, NOW + tonumber(keep), id) end
end

-- Deletes a finished job of `queue` found in its finished zset of `state` (`keep`: the kept one),
-- which it leaves, as purge and prune delete: its hash, its unique key (while the key is still
-- its own), its entries in the jobs index, the kept zset and the queue's expired set (a dead job
-- with a start deadline, 'x', or one whose hash is gone). Returns 1, or 0 when the hash was gone
-- already (evicted): an entry dropped, no job deleted.
local function delete_finished(id, queue, state, keep)
  local key = P_JOB .. id
  local job = redis.call('HMGET', key, 'uk', 'x')
  local unique_key = job[1]
  if unique_key and redis.call('HGET', K_UNIQUE, unique_key) == id then
    redis.call('HDEL', K_UNIQUE, unique_key)
  end
  local gone = redis.call('DEL', key)
  if state == 'dead' and (job[2] or gone == 0) then redis.call('SREM', P_EXPIRED .. queue, id) end
  redis.call('ZREM', K_JOBS, id)
  redis.call('ZREM', finished_key(queue, state, keep), id)
  if keep then redis.call('ZREM', K_KEPT, id) end
  return gone
end

-- Ends a job that was not started by its deadline as dead, attempts unchanged, once it is out of
-- ready or scheduled (and of the deadlines zset): counted in its queue's expired set for stats.
local function end_expired(key, id, queue)
  redis.call('HSET', key, 's', 'dead', 'e', EXPIRED_ERROR, 'f', NOW, 'u', NOW)
  free_unique_key_at_end(key, id)
  add_finished(queue, id, 'dead', redis.call('HGET', key, 'k'))
  redis.call('SADD', P_EXPIRED .. queue, id)
end

-- Ends up to `limit` jobs, of any queue (paused ones too), whose start deadline is now or past,
-- earliest deadline first; returns their ids. One range read of the deadlines zset when none is
-- due (an absent key: a store without deadlines). A queue whose ready or scheduled zset it empties
-- loses its flag, as a cancel's does. More than `limit` are left to the next call; a claim never
-- leases one of them meanwhile (claim-core.lua checks each job it leases).
local function expire_jobs(limit)
  local ids = redis.call('ZRANGEBYSCORE', K_DEADLINES, '-inf', NOW, 'LIMIT', 0, limit)
  if #ids == 0 then return ids end
  local ended, emptied_ready, emptied_scheduled = {}, {}, {}
  for _, id in ipairs(ids) do
    local key = P_JOB .. id
    local job = redis.call('HMGET', key, 's', 'q', 'n', 'ra', 'g')
    local state, queue = job[1], job[2]
    if not queue then
      forget_job(id)
    elseif state == 'ready' or state == 'scheduled' then
      if state == 'ready' then
        remove_ready(queue, job[3], ready_member(job[4], id), job[5])
        emptied_ready[queue] = true
      else
        redis.call('ZREM', P_SCHEDULED .. queue, id)
        emptied_scheduled[queue] = true
      end
      end_expired(key, id, queue)
      ended[#ended + 1] = id
    end
  end
  for first = 1, #ids, UNPACK_MAX do
    redis.call('ZREM', K_DEADLINES, unpack(ids, first, math.min(first + UNPACK_MAX - 1, #ids)))
  end
  for queue in pairs(emptied_ready) do unflag_ready_if_empty(queue) end
  for queue in pairs(emptied_scheduled) do
    if redis.call('ZCARD', P_SCHEDULED .. queue) == 0 then redis.call('SREM', K_HAS_SCHEDULED, queue) end
  end
  return ended
end

-- A claim's sweep, when its lookup found DEADLINES_FLAG: one ZRANGE of the earliest deadline, and
-- expire_jobs only when it has passed. A zset found empty (its jobs leased, cancelled or ended
-- since) loses the flag. Under an eviction policy the flag may be gone while the zset is not: the
-- claims then end nothing, but still lease no job past its deadline (claim-core.lua), and the
-- recoverer's sweep (recover-expired.lua), which reads the zset itself, ends them.
local function expire_flagged(limit)
  local first = redis.call('ZRANGE', K_DEADLINES, 0, 0, 'WITHSCORES')
  if first[2] == nil then
    redis.call('SREM', K_HAS_SCHEDULED, DEADLINES_FLAG)
  elseif tonumber(first[2]) <= NOW then
    expire_jobs(limit)
  end
end

-- Puts a job back in line as ready (run_at <= NOW) or scheduled, by its hash fields; `expires_at`,
-- its 'x' (nil for none): a job back in line may still end by its start deadline, as one that
-- never started does (the SQL stores' deadline index holds every ready or scheduled job with one).
-- `group`: its 'g' (nil for none).
local function put_back(key, id, queue, name, priority, run_at, expires_at, group)
  if expires_at then track_deadline(id, expires_at) end
  if run_at <= NOW then
    redis.call('HSET', key, 's', 'ready')
    add_ready(queue, name, priority, run_at, id, group)
  else
    redis.call('HSET', key, 's', 'scheduled')
    add_scheduled(queue, run_at, id)
  end
end
