-- settle: every outcome of a batch in one statement, lease-fenced (migrations/0001_init.sql, settle).
-- Params: $1 id[], $2 lease_token[], $3 kind[], $4 run_at[], $5 error[] (JSON text), $6 result[] (JSON
--         text), $7 now (ms or NULL)
-- Returns: lost, the 1-based positions of the items whose lease was lost.
SELECT :"schema".settle($1::bigint[], $2::text[], $3::text[], $4::bigint[], $5::text[], $6::text[], $7::bigint)
       AS lost
