-- The indexes of listJobs's pages (sql/list-jobs*.sql), each read backwards from the page's
-- cursor, so that a page reads its own rows and no others however many jobs the table holds.
--
-- A queue's jobs, every state: an index whose columns never change after the enqueue, so that
-- claim, settle and renew leave it alone (SQLite updates only the indexes whose columns, or whose
-- WHERE's, a statement changes): one entry more per enqueue and per delete. Also a queue's
-- completed jobs, which are most of a queue's jobs, so that the walk past the others is short.
CREATE INDEX ferry_jobs_listed_by_queue ON ferry_jobs (queue, id);

-- A state's jobs, and a queue's jobs of a state: the jobs not completed only. Completed jobs are
-- most of a table that keeps them, and the state every job reaches: left out, a settle that
-- completes a job deletes the entries and inserts none, and the indexes stay the size of the
-- work in line and of the dead. A page of completed jobs walks the primary key (or the index
-- above) instead, where nearly every row it reads is one it lists.
CREATE INDEX ferry_jobs_listed_by_state ON ferry_jobs (state, id) WHERE state <> 'completed';
CREATE INDEX ferry_jobs_listed_by_queue_state ON ferry_jobs (queue, state, id) WHERE state <> 'completed';
