-- settle with a claim: settle then claim in one transaction and one round trip
-- (functions/settle-and-claim.sql).
-- Params: $1..$6 as settle.sql, $7 queues[], $8 limit, $9 lease_ms, $10 worker_id, $11 now (ms or NULL),
--         $12 the lease tokens' random base, $13 names[] (as claim.sql),
--         $14 progress[], $15 logs[] (as settle.sql)
-- Returns: lost and locked (positions of settlements, as settle.sql) and the columns of each claimed
--          job, in claim order; a single row with a NULL id when nothing was claimed.
SELECT r.lost, r.locked, (r.job).*
FROM :"schema".settle_and_claim($1::bigint[], $2::text[], $3::text[], $4::bigint[], $5::text[], $6::text[],
                                $7::text[], $8::integer, $9::bigint, $10::text, $11::bigint, $12::text,
                                $13::text[], $14::text[], $15::text[]) AS r
