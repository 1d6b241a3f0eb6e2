-- requestStop: asks every worker started before :now to stop gracefully.
-- Params: :now
INSERT INTO ferry_control (key, at) VALUES ('stop', :now)
ON CONFLICT (key) DO UPDATE SET at = max(at, excluded.at)
