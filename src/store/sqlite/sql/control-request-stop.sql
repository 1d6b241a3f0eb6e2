-- control with requestStop: asks every running worker to stop gracefully. Workers compare the
-- value with the one they saw at start, so it must change with every request, even from a host
-- whose clock is behind: it moves to :now or one millisecond past the previous request, whichever
-- is later.
-- Params: :now
INSERT INTO ferry_control (key, at) VALUES ('stop', :now)
ON CONFLICT (key) DO UPDATE SET at = max(at + 1, excluded.at)
