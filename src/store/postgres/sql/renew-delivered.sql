-- renew with delivered: the worker takes jobs it was handed before it starts them
-- (functions/take-delivered.sql, take_delivered(): its commit does not wait for the WAL flush).
-- Params: $1 id[], $2 lease_token[], $3 lease_ms, $4 now (ms or NULL)
-- Returns: ord, the 1-based positions of the jobs taken (the others went back in line).
SELECT t.ord FROM :"schema".take_delivered($1::bigint[], $2::text[], $3::bigint, $4::bigint) AS t(ord)
