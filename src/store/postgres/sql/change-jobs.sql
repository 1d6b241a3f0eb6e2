-- changeJobs: jobs that have not started (scheduled or ready) change, in one call of
-- change_jobs() (../functions/change-jobs.sql: what changes, the state rule, the wake-ups, the
-- locking).
-- Params: $1 id[], $2 priority[], $3 run_at[], $4 payload[] (JSON text), $5 max_attempts[] (arrays
--         of one entry per change, in order), $6 now (ms or NULL)
-- Returns: one row per change, in order: result ('ok', 'not_found' or 'not_changeable').
SELECT c.result
FROM :"schema".change_jobs($1::bigint[], $2::integer[], $3::bigint[], $4::text[], $5::integer[], $6::bigint)
     WITH ORDINALITY AS c(result, n)
ORDER BY c.n
