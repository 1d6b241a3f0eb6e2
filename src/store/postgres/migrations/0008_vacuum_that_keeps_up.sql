-- Autovacuum settings for the jobs table that keep up with a job queue's churn.
--
-- Every job leaves dead row versions behind: its claim and its settlement each write a new version
-- of its row, and none of them can be a HOT update (a heap-only tuple, cleaned by pruning without
-- vacuum), because every index on the table is partial on `state` and a column of an index's
-- predicate counts as indexed. So a fillfactor below 100 buys nothing here: it leaves room on each
-- page for a new version that must still get new index entries. What removes the dead versions is
-- vacuum, and PostgreSQL's defaults start it only once a fifth of the table is dead
-- (autovacuum_vacuum_scale_factor 0.2): on a table that keeps 1,000,000 finished jobs, after
-- 200,000 dead versions, and then throttle it (autovacuum_vacuum_cost_delay 2 ms) while the queue
-- goes on churning. Here the table is vacuumed once 1 % of it plus 1,000 rows are dead, at full
-- speed. Autovacuum still visits a database only once per autovacuum_naptime (1 min by default, a
-- server setting that no table can change), so a busy server may want it shorter: docs/backends.md.
-- Measured by the postgres-churn benchmarks (bench/RESULTS.md: 600 jobs/s for 4 minutes, on
-- PostgreSQL's defaults and on these): on a table that kept 1,000,000 completed jobs, 4 vacuums of
-- 0.06-0.16 s instead of one of 4.1 s at 173 s, 103k dead tuples at the peak instead of 303k, the
-- heap grown by 869 bytes per job instead of 1,206; on a fresh table, the same vacuums, each 7
-- times faster.

ALTER TABLE :"schema".jobs SET (
  autovacuum_vacuum_scale_factor = 0.01,
  autovacuum_vacuum_threshold = 1000,
  autovacuum_vacuum_cost_delay = 0
);
