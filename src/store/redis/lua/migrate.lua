-- migrate: records the key layout's version. Redis has no schema: version 1 is the layout in
-- prelude.lua; a later layout change would move data here, in one atomic step.
-- KEYS, ARGV 1-7: the common layout (prelude.lua).
-- ARGV FIRST: this Ferry's version.
-- Returns: { fromVersion, toVersion }, or the error 'FERRY schema_too_new <version>'.
local latest = tonumber(ARGV[FIRST])
local version = tonumber(redis.call('GET', K_SCHEMA) or '0')
if version > latest then
  return redis.error_reply('FERRY schema_too_new ' .. version)
end
if version < latest then redis.call('SET', K_SCHEMA, latest) end
return { version, math.max(version, latest) }
