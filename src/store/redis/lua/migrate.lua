-- migrate: records the key layout's version and the namespace's instance marker. Redis has no
-- schema: a layout change would move data here, in one atomic step.
--   layout 1 (0001_key-layout): the keys in prelude.lua.
--   layout 2 (0002_instance-marker): the instance marker (K_INSTANCE), a random id written here
--     once (SET NX) and never changed. Every store reads it at open and every script checks it
--     (prelude.lua), so that a server emptied under running workers is noticed, not refilled.
-- KEYS, ARGV 1-9: the common layout (prelude.lua). ARGV 8 is '' at open; a store that is open
--   already (migrate() called again) passes its marker, and the prelude checks it as for any script.
-- ARGV FIRST: this Ferry's version; FIRST + 1: a new random id, the marker if the namespace has none.
-- Returns: { fromVersion, toVersion, the namespace's instance marker }, or the errors
--   'FERRY schema_too_new <version>' and 'FERRY namespace_lost …' (prelude.lua).
local latest = tonumber(ARGV[FIRST])
local version = tonumber(redis.call('GET', K_SCHEMA) or '0')
if version > latest then
  return redis.error_reply('FERRY schema_too_new ' .. version)
end
if version < latest then redis.call('SET', K_SCHEMA, latest) end
redis.call('SET', K_INSTANCE, ARGV[FIRST + 1], 'NX')
return { version, math.max(version, latest), redis.call('GET', K_INSTANCE) }
