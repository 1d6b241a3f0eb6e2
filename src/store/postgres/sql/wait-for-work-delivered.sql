-- waitForWork with a claim: the jobs of a delivery too large for its notification, which named them by id
-- (functions/deliver.sql). They are leased to the waiter already; one that is no
-- longer active (cancelled meanwhile) is left out.
-- Params: $1 id[] (claim order)
-- Returns: the rows, in the order of $1.
-- Uses: the primary key.
SELECT j.*
FROM unnest($1::bigint[]) WITH ORDINALITY AS d(id, ord)
JOIN :"schema".jobs AS j ON j.id = d.id
WHERE j.id = ANY ($1::bigint[]) AND j.state = 'active'
ORDER BY d.ord
