-- renew: extends a batch of leases in one statement. Fenced by the lease token; an expired but not
-- yet recovered lease may still be renewed, since nobody else can hold the job until recovery.
-- Params: $1 id[], $2 lease_token[], $3 lease_ms, $4 now (ms or NULL)
-- Returns: ord, the 1-based positions of the leases renewed (the others were lost).
WITH clock AS (SELECT coalesce($4::bigint, :"schema".now_ms()) AS at)
UPDATE :"schema".jobs AS j
SET lease_expires_at = clock.at + $3::bigint, updated_at = clock.at
FROM clock, unnest($1::bigint[], $2::text[]) WITH ORDINALITY AS l(id, lease_token, ord)
WHERE j.id = l.id AND j.id = ANY ($1::bigint[]) AND j.state = 'active' AND j.lease_token = l.lease_token
RETURNING l.ord
