-- enqueue: frees the unique key of a job whose throttle window has ended, so that the enqueue
-- that found it can take the key (sql/enqueue.sql again), in the same transaction.
-- Params: :id
-- Returns: nothing.
-- Uses: the primary key.
UPDATE ferry_jobs SET held_unique_key = NULL WHERE id = :id
