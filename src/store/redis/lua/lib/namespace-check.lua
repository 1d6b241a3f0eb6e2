-- namespace-check: included right after the prelude by every script but migrate.lua, so it runs
-- before anything else: a script refuses a namespace whose instance marker is not the one its
-- store opened (namespace_lost, prelude.lua). migrate.lua at open (no marker yet) writes the marker
-- instead, and checks it itself when its store is open already.
do
  local lost = namespace_lost()
  if lost then return lost end
end
