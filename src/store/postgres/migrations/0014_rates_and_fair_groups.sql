-- Queue rate limits, per-group limits and fair rotation between groups (Store.control's limits:
-- rate, groupConcurrency, groupRate; fairness needs no setting), all decided inside claim()
-- (../functions/claim.sql), in the transaction that picks the jobs.
--
-- The settings are more columns of the queue's row (0012), which claims of a queue with any limit
-- lock; rate_opens_at is the claim's wake hint: the earliest time a rate that held back a ready job
-- lets one start again, which waitForWork arms its due timer with (../functions/wait-for-work.sql).
-- Catalog only: columns without a default.
ALTER TABLE :"schema".queues
  ADD COLUMN rate_limit        integer,  -- at most this many starts of the queue ...
  ADD COLUMN rate_per_ms       bigint,   -- ... in any window of this many ms; both NULL: no rate
  ADD COLUMN group_concurrency integer,  -- at most this many live leases per group; NULL: no limit
  ADD COLUMN group_rate_limit  integer,  -- at most this many starts per group ...
  ADD COLUMN group_rate_per_ms bigint,   -- ... in any window of this many ms; both NULL: no rate
  ADD COLUMN rate_opens_at     bigint;   -- ms; a time already past means nothing

-- Groups are served in byte order whatever the database's collation (the same order as the SQLite
-- and Redis stores), and the indexes below are read in that order: the column itself compares
-- bytewise, so no statement has to say COLLATE "C" to reach them. A collation change of a text
-- column rewrites no row (checked: the table keeps its file), and no index was on the column yet.
ALTER TABLE :"schema".jobs ALTER COLUMN group_key TYPE text COLLATE "C";

-- The start log of the rate-limited queues: one row per job claimed of a queue with a rate or a
-- group rate (group_key '' for a job without a group: a group is 1 to 255 characters), at the
-- claim's instant. A start at s counts while now - s < perMs. The claims of the queue prune what
-- is older than its longest window (they hold the queue's row while they do), and control() deletes
-- the queue's log when its last rate goes. Counting a window reads at most `limit` entries of
-- starts_by_queue (the queue's rate) or starts_by_group (a group's): newest first from the window's
-- start. Queues without a rate write nothing here.
CREATE TABLE :"schema".starts (
  queue      text NOT NULL,
  group_key  text COLLATE "C" NOT NULL,
  started_at bigint NOT NULL  -- not `at`: the functions' variable of the call's instant
);
CREATE INDEX starts_by_queue ON :"schema".starts (queue, started_at);
CREATE INDEX starts_by_group ON :"schema".starts (queue, group_key, started_at);
-- A log that every claim of a rate-limited queue appends to and prunes: vacuumed as the jobs table
-- is (0008), so the pruned entries do not pile up at the head of the index ranges that claims read.
ALTER TABLE :"schema".starts SET (
  autovacuum_vacuum_scale_factor = 0.01,
  autovacuum_vacuum_threshold = 1000,
  autovacuum_vacuum_cost_delay = 0
);

-- Fair rotation: per queue, the group last served (NULL: none yet; '' is the jobs without a
-- group, which take their turn first). The claims of a queue with grouped ready jobs lock its row
-- while they pick, so they serialize on it; a queue whose jobs have no group never gets one.
CREATE TABLE :"schema".group_turns (
  queue      text PRIMARY KEY,
  last_group text COLLATE "C"
);

-- The ready indexes split by group: jobs without a group stay in jobs_ready and jobs_ready_by_name,
-- in claim order as before (the claim of a queue without grouped jobs reads exactly what it read
-- before); grouped jobs go to jobs_grouped, by queue, state and group, then in claim order, which
-- the rotation reads one group at a time: whether a queue has grouped ready jobs, the next group
-- after one, a group's first ready job, and a group's live leases (state 'active', with
-- lease_expires_at in the index), each a seek. A claim of some names filters them there (name is
-- in the index): an index of grouped jobs by name as well would cost every claim, enqueue and
-- settle a relation more to plan and to open (about 13 µs per claim each, below). Each ready job is
-- still in two ready indexes, as before, so an enqueue or a claim maintains no more. The other
-- way, grouped jobs kept in jobs_ready as well, would put every grouped job in three, and the turn
-- of the jobs without a group would read past every grouped job ahead of them in the queue
-- (measured, ../functions/claim.sql). Every statement that asks whether a queue has ready work asks
-- both halves (wait_for_work, deliver).
-- What the indexes cost a claim that no group or limit concerns: claims of 1 from 30,000 ready
-- jobs, on copies of the schema before this migration with its index changes applied by hand
-- (200-claim chunks interleaved, each committed, 2 runs, load 1.4, 2026-12-03): 0.713 ms p50
-- without any, 0.726 with jobs_grouped, 0.715 with the two partial predicates, 0.728 with both.
-- Built in this transaction, as every migration runs: writes to the jobs table wait for the builds
-- (the whole migration, opening the store included: 1.4 s on a table of 1,000,000 jobs, 100,000 of
-- them ready, on the shared 2-core machine at load 7).
DROP INDEX :"schema".jobs_ready;
CREATE INDEX jobs_ready ON :"schema".jobs (queue, priority DESC, run_at, id)
  WHERE state = 'ready' AND group_key IS NULL;
DROP INDEX :"schema".jobs_ready_by_name;
CREATE INDEX jobs_ready_by_name ON :"schema".jobs (queue, name, priority DESC, run_at, id)
  WHERE state = 'ready' AND group_key IS NULL;
CREATE INDEX jobs_grouped ON :"schema".jobs (queue, state, group_key, priority DESC, run_at, id)
  INCLUDE (name, lease_expires_at)
  WHERE group_key IS NOT NULL AND state IN ('ready', 'active');
