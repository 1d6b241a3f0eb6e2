-- enqueue: adds the jobs an enqueue created in one queue and state to their count, once per queue
-- and state a call created jobs in (enqueue-rows.ts), in its transaction. Inserts are counted here,
-- not by a trigger as every other change of the counts is: see migrations/0014_job_counts.sql.
-- Params: :queue, :state ('ready'|'scheduled'), :count
-- Returns: nothing.
-- Uses: ferry_job_counts' primary key.
INSERT INTO ferry_job_counts (queue, state, count) VALUES (:queue, :state, :count)
ON CONFLICT (queue, state) DO UPDATE SET count = count + excluded.count
