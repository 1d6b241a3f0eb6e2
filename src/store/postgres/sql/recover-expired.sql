-- recoverExpired: leases that ran out go back in line (functions/recover-expired.sql): any of them (ids NULL), or only those given, each if still exactly as seen.
-- The usual answer (nothing expired) is one probe of jobs_active and writes nothing.
-- Params: $1 now (ms or NULL), $2 limit, $3 id[] (or NULL), $4 lease_token[], $5 lease_expires_at[]
-- Returns: id (text), state of each recovered job.
SELECT r.id::text AS id, r.state
FROM :"schema".recover_expired($1::bigint, $2::integer, $3::bigint[], $4::text[], $5::bigint[]) AS r
