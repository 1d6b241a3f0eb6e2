-- schedule-fire: moves a schedule's last slot, and its last job when the fire enqueued one, inside
-- the fire's transaction, after schedule-get.sql found it as its scheduler read it.
-- Params: :id, :to_slot, :last_job_id (null: the last job stays)
-- Returns: nothing.
UPDATE ferry_schedules SET last_slot = :to_slot, last_job_id = coalesce(:last_job_id, last_job_id) WHERE id = :id
