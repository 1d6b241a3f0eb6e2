-- settle: applies a batch of settlements, each fenced by its lease token (lib/settle-core.lua).
-- include: lib/prelude.lua, lib/namespace-check.lua, lib/settle-core.lua
-- flags: allow-oom
-- KEYS, ARGV 1-4: the common layout (prelude.lua).
-- ARGV FIRST..: settle_items's (lib/settle-core.lua).
-- Returns: { 1 (ok) | 0 (lease lost), ... } in input order.
-- Publishes: 'r<queue>' / 's<runAt> <queue>' for jobs put back in line.
local results = settle_items(FIRST)
publish_wakes()
return results
