-- claim, step 1: scheduled jobs whose time has come become ready (they keep run_at, so they take
-- their place in FIFO order among ready jobs).
-- Params: :now
-- Uses: ferry_jobs_scheduled; touches only the due rows.
UPDATE ferry_jobs SET state = 'ready', updated_at = :now
WHERE state = 'scheduled' AND run_at <= :now
