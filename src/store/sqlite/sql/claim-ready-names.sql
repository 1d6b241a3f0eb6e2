-- claim without a names filter, step 2a, run per queue: the next job name after :after that has
-- ready jobs in the queue, in name order; run from '' until it returns no row, it lists the names
-- the claim then takes the next jobs of (claim-next-named.sql) and merges. No name is empty
-- (core/validate.ts NAME_PATTERN), so '' comes before every one.
-- Params: :queue, :after
-- Returns: name, or no row.
-- Jobs with a group are not here: claim-rows.ts takes them round their groups (claim-next-group.sql).
-- Uses: ferry_jobs_ready_by_name (migrations/0003, of the jobs without a group since 0008): one seek per name (a skip scan), whatever
-- the backlog. INDEXED BY, as claim-next-named.sql.
SELECT name FROM ferry_jobs INDEXED BY ferry_jobs_ready_by_name
WHERE state = 'ready' AND group_key IS NULL AND queue = :queue AND name > :after
ORDER BY name
LIMIT 1
