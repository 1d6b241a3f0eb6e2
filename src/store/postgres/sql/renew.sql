-- renew: extends a batch of leases in one statement, fenced by the lease token, passing over rows
-- locked by another session; with delivered, the worker takes jobs it was handed, and the commit
-- does not wait for the WAL flush (functions/renew.sql).
-- Params: $1 id[], $2 lease_token[], $3 lease_ms, $4 now (ms or NULL), $5 delivered
-- Returns: ord (1-based) and result ('ok' | 'lease_lost' | 'locked') for every lease, in input order.
SELECT r.ord, r.result
FROM :"schema".renew($1::bigint[], $2::text[], $3::bigint, $4::bigint, $5::boolean) AS r
ORDER BY r.ord
