-- Durable schedules (Store.schedules, Store.fireSchedule), and what a job carries beside its
-- columns.
--
-- jobs.meta: JSON text of what no query reads (the schedule slot a job was fired for, its own
-- backoff: store/kernel/job-meta.ts), NULL for a plain job, so a plain job's row grows by one bit
-- of its null bitmap. Catalog only: a column added without a default rewrites no row and scans
-- nothing, and its lock is held for an instant. Rows of a process of an older Ferry still running
-- have no meta, as plain jobs. A batch of plain jobs sends NULL for the whole column
-- (enqueue_batch's last array), so their enqueue, claim and bulk enqueue cost what they did: median
-- per-round ratios against the release before of 0.94x, 1.00x and 0.97x (5 runs of 40 interleaved
-- rounds, load 4-7 on the shared 2-core machine; docs/backends.md, Schedules, has the ranges).
--
-- One row per schedule (store/kernel/schedules.ts says what each change does to it). last_slot is
-- the newest slot fired or passed over: fire_schedule() moves it only from the value its scheduler
-- read, with the row locked, in the transaction that enqueues the slot's jobs
-- (../functions/fire-schedule.sql). version moves with every change of the definition or the
-- pause. The store-wide schedules version, which the workers' control record carries, is the
-- control table's row 'schedules' (its `at` holds the version; no row: 0), beside the stop request
-- (0001): control() reads both in the statement it already runs.
--
-- The functions changed with it (../functions/: enqueue_batch and enqueue store meta, claim and
-- deliver return it; fire_schedule is new), which a new migration must come with anyway
-- (../functions/README.md).

ALTER TABLE :"schema".jobs ADD COLUMN meta text;

-- Ids compare bytewise (COLLATE "C"), so schedules() lists them in the order the other stores do,
-- whatever the database's collation.
CREATE TABLE :"schema".schedules (
  id          text COLLATE "C" PRIMARY KEY,
  cron        text   NOT NULL,
  time_zone   text   NOT NULL,
  job         text   NOT NULL, -- JSON: the ScheduleJob each fire enqueues
  missed      text   NOT NULL, -- 'skip', 'once' or 'all'
  overlap     text   NOT NULL, -- 'allow' or 'skip'
  paused_at   bigint,          -- NULL while the schedule runs
  last_slot   bigint NOT NULL,
  last_job_id bigint,          -- the job of the last fire, for the overlap policy; NULL before it
  version     bigint NOT NULL,
  created_at  bigint NOT NULL,
  updated_at  bigint NOT NULL
);
