-- schedule-get: one schedule, inside the write transaction of a change or a fire.
-- Params: :id
-- Returns: its ferry_schedules row, or none.
SELECT * FROM ferry_schedules WHERE id = :id
