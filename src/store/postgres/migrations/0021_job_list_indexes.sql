-- The indexes of listJobs's pages (sql/list-jobs.sql): a state's jobs, and a queue's jobs of a
-- state, each read backwards from the page's cursor, so that a page reads its own rows and no
-- others however many jobs the table holds.
--
-- Completed jobs are left out: most of a table that keeps them, and the state every job reaches.
-- Every change of a job row makes a new version of it with entries in each index whose WHERE it
-- passes (no change is HOT: the state and the lease are indexed already); a job that completes
-- then adds none here, and the indexes stay the size of the work in line and of the dead. A page
-- of completed jobs walks the primary key instead, where nearly every row it reads is one it lists.
--
-- A queue's jobs of every state have no index of their own: one on (queue, id) would take an
-- entry from every claim, renew and settle, and a page walks the primary key within its budget.
CREATE INDEX jobs_listed_by_state ON :"schema".jobs (state, id) WHERE state <> 'completed';
CREATE INDEX jobs_listed_by_queue_state ON :"schema".jobs (queue, state, id) WHERE state <> 'completed';
