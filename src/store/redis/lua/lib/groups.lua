-- groups: what a claim (lib/claim-core.lua) and a wait (wait-for-work.lua) share about a queue's
-- grouped ready jobs (prelude.lua: group-ready, groups): its groups in byte order, a page at a
-- time, and a group's room under the queue's group limits. Included by the scripts that claim and
-- by wait-for-work.lua.

-- The most groups one read asks for: a claim reads them a page at a time, from a small first page
-- (most claims take from the first groups they come to) up to this.
local GROUP_PAGE_MAX = 1000

-- Whether a sorts before b byte by byte, as ZRANGEBYLEX orders them. Lua's '<' on strings follows
-- the server's LC_COLLATE, which redis-server sets from its environment: not byte order everywhere.
local function bytes_before(a, b)
  if a == b then return false end
  for i = 1, math.min(#a, #b) do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return #a < #b
end

-- The queue's groups with ready jobs (of `names`, if given: groups holding jobs of any of them),
-- in byte order, from `min` to `max` (ZRANGEBYLEX bounds), at most `count`; and whether groups
-- past the page may still be in the range (read from just past its last group). With names, one
-- read per name, merged; what lies past the first name's full page is left to the next page, as
-- another name's groups there are not all read yet.
local function groups_range(queue, names, min, max, count)
  if names == nil then
    local page = redis.call('ZRANGEBYLEX', groups_key(queue), min, max, 'LIMIT', 0, count)
    return page, #page == count
  end
  local merged, seen, bound = {}, {}, nil
  for _, name in ipairs(names) do
    local page = redis.call('ZRANGEBYLEX', groups_key(queue, name), min, max, 'LIMIT', 0, count)
    for _, group in ipairs(page) do
      if not seen[group] then
        seen[group] = true
        merged[#merged + 1] = group
      end
    end
    if #page == count and (bound == nil or bytes_before(page[count], bound)) then bound = page[count] end
  end
  if #names > 1 then table.sort(merged, bytes_before) end
  if bound then
    local kept = {}
    for _, group in ipairs(merged) do
      if not bytes_before(bound, group) then kept[#kept + 1] = group end
    end
    merged = kept
  end
  return merged, bound ~= nil
end

-- A group's room under the queue's group limits (`gate`: queue_gate's, prelude.lua), as two
-- numbers, nil where the queue has no such limit: how many more of its jobs may hold a live lease
-- (group concurrency), and how many more may start in its window (group rate: then also, when
-- that is 0, when the window lets the next start in). A group at its concurrency limit is woken
-- when a lease ends, so its window is not looked at.
local function group_room(queue, group, gate)
  local leases, starts, opens
  if gate.group_concurrency then
    local live = redis.call('ZCOUNT', group_leases_key(queue, group), '(' .. string.format('%d', NOW), '+inf')
    leases = math.max(gate.group_concurrency - live, 0)
  end
  if gate.group_rate_limit and leases ~= 0 then
    starts, opens = window_room(group_starts_key(queue, group), gate.group_rate_limit, gate.group_rate_per_ms)
  end
  return leases, starts, opens
end
