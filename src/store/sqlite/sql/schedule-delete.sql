-- schedule-delete: removes a schedule; its fired jobs stay.
-- Params: :id
-- Returns: nothing.
DELETE FROM ferry_schedules WHERE id = :id
