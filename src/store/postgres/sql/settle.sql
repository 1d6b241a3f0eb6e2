-- settle: every outcome of a batch in one statement, lease-fenced, passing over rows locked by
-- another session (functions/settle.sql).
-- Params: $1 id[], $2 lease_token[], $3 kind[], $4 run_at[], $5 error[] (JSON text), $6 result[] (JSON
--         text), $7 now (ms or NULL),
--         $8 progress[], $9 logs[] (JSON text; NULL when no item carries one)
-- Returns: lost, the 1-based positions of the items whose lease was lost, and locked, those whose
--          row another session holds locked (nothing written for them: try again later).
SELECT s.lost, s.locked
FROM :"schema".settle($1::bigint[], $2::text[], $3::text[], $4::bigint[], $5::text[], $6::text[], $7::bigint,
                          $8::text[], $9::text[]) AS s
