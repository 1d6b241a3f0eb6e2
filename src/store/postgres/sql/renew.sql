-- renew: extends a batch of leases in one statement, fenced by the lease token, passing over rows
-- locked by another session; with delivered, the worker takes jobs it was handed, and the commit
-- does not wait for the WAL flush (functions/renew.sql).
-- Params: $1 id[], $2 lease_token[], $3 lease_ms, $4 now (ms or NULL), $5 delivered, $6 progress[]
--         (JSON text), $7 logs[] (JSON array text): each NULL when no lease carries one
-- Returns: ord (1-based) and result ('ok' | 'lease_lost' | 'locked') for every lease, in input order.
SELECT r.ord, r.result
FROM :"schema".renew($1::bigint[], $2::text[], $3::bigint, $4::bigint, $5::boolean, $6::text[], $7::text[]) AS r
ORDER BY r.ord
