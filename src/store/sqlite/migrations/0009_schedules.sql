-- Durable schedules (docs/schedules.md), and what a job carries beside its columns.
--
-- ferry_jobs.meta: JSON text of what no query reads (the schedule slot a job was fired for, its
-- own backoff: store/kernel/job-meta.ts), null for a plain job. Adding a nullable column without
-- a default rewrites no row.
ALTER TABLE ferry_jobs ADD COLUMN meta TEXT;

-- One row per schedule (store/kernel/schedules.ts). last_slot is the newest slot fired or passed
-- over; a fire moves it only from the value its scheduler read, in the transaction that inserts
-- the slot's jobs. version moves with every change of definition or pause; the store-wide
-- schedules version is ferry_control's row 'schedules' (its `at` holds the version).
CREATE TABLE ferry_schedules (
  id          TEXT    PRIMARY KEY,
  cron        TEXT    NOT NULL,
  time_zone   TEXT    NOT NULL,
  job         TEXT    NOT NULL, -- JSON: the ScheduleJob each fire enqueues
  missed      TEXT    NOT NULL, -- 'skip', 'once' or 'all'
  overlap     TEXT    NOT NULL, -- 'allow' or 'skip'
  paused_at   INTEGER,
  last_slot   INTEGER NOT NULL,
  last_job_id INTEGER,
  version     INTEGER NOT NULL,
  created_at  INTEGER NOT NULL,
  updated_at  INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
