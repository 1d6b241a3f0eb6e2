-- enqueue: a whole batch in one statement (functions/enqueue-batch.sql), so the group
-- commit of the Client costs one round trip and one commit however many jobs it carries.
-- Params: $1 queue[], $2 name[], $3 payload[] (JSON text), $4 priority[], $5 run_at[] (ms or NULL),
--         $6 delay_ms[] (used when run_at is NULL), $7 max_attempts[], $8 timeout_ms[], $9 unique_key[],
--         $10 group[], $11 expires_at[] (ms or NULL), $12 expires_in_ms[] (used when expires_at is
--         NULL), $13 meta[] (JSON text or NULL) (each of the last four NULL as a whole when no job
--         of the batch has one), $14 now (ms, or NULL for the server's clock), $15 the lease tokens'
--         random base to hand ready jobs to waiting workers with (NULL: no delivery; the store's own
--         enqueue only, never inside a caller's transaction), $16 unique_until[] and $17
--         unique_for_ms[] (how long each key holds), $18 debounce_ms[] (each of the three NULL as a
--         whole when no job of the batch has one)
-- Returns: one row, in input order: ids (text, joined by ','; for a job whose unique key was held,
--          the holder's) and created ('t' or 'f' per job, 'd' for a debounced one). One row rather
--          than one per job: the store reads it in half the time (postgres-enqueue-arrays.ts,
--          enqueueResults).
SELECT string_agg(e.id::text, ',' ORDER BY e.ord) AS ids,
       string_agg(CASE WHEN e.created THEN 't' WHEN NOT e.created THEN 'f' ELSE 'd' END, '' ORDER BY e.ord)
         AS created
FROM :"schema".enqueue_batch($1::text[], $2::text[], $3::text[], $4::integer[], $5::bigint[], $6::bigint[],
                             $7::integer[], $8::integer[], $9::text[], $14::bigint, $15::text, $10::text[],
                             $11::bigint[], $12::bigint[], $13::text[], $16::text[], $17::bigint[],
                             $18::bigint[])
     WITH ORDINALITY AS e(id, created, ord)
