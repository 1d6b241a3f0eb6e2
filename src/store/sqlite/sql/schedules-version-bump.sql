-- schedules-version-bump: moves the store's schedules version on, in the transaction of a change.
-- Params: none
-- Returns: nothing.
INSERT INTO ferry_control (key, at) VALUES ('schedules', 1)
ON CONFLICT (key) DO UPDATE SET at = at + 1
