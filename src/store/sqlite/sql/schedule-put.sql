-- schedule-put: writes a schedule's row as store/kernel/schedules.ts made it (scheduleRowAfter).
-- Params: every column, by name.
-- Returns: nothing.
INSERT INTO ferry_schedules (id, cron, time_zone, job, missed, overlap, paused_at, last_slot, last_job_id, version,
                             created_at, updated_at)
VALUES (:id, :cron, :time_zone, :job, :missed, :overlap, :paused_at, :last_slot, :last_job_id, :version, :created_at,
        :updated_at)
ON CONFLICT (id) DO UPDATE SET cron = excluded.cron, time_zone = excluded.time_zone, job = excluded.job,
  missed = excluded.missed, overlap = excluded.overlap, paused_at = excluded.paused_at,
  last_slot = excluded.last_slot, last_job_id = excluded.last_job_id, version = excluded.version,
  updated_at = excluded.updated_at
