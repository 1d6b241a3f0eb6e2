-- throughput: the counts of the minutes in [from, to), cut to the day kept (heartbeat.lua). Read
-- only.
-- include: lib/prelude.lua, lib/namespace-check.lua
-- flags: allow-oom
-- KEYS, ARGV 1-4: the common layout (prelude.lua).
-- ARGV FIRST: from (ms); FIRST + 1: to (ms), or '' for now; FIRST + 2: the day kept (ms).
-- Returns: { minute, { field, count, ... }, ... }: each minute that has counts, oldest first, with
--   its hash as HGETALL gives it (the store picks the queue and sorts by it).
-- Cost: one ZRANGEBYSCORE, and one HGETALL per minute in the range: at most a day's 1,440.
local from = math.max(tonumber(ARGV[FIRST]), NOW - tonumber(ARGV[FIRST + 2]))
local to = ARGV[FIRST + 1] == '' and NOW + 1 or tonumber(ARGV[FIRST + 1])
local minutes = redis.call('ZRANGEBYSCORE', K_THROUGHPUT_MINUTES, string.format('%d', from),
  '(' .. string.format('%d', to))
local rows = {}
for _, minute in ipairs(minutes) do
  rows[#rows + 1] = minute
  rows[#rows + 1] = redis.call('HGETALL', P_THROUGHPUT .. minute)
end
return rows
