-- enqueue: the jobs holding these unique keys, read again when a holder committed while enqueue ran.
-- Params: $1 unique_key[]
-- Returns: unique_key, id (text).
-- Uses: jobs_unique_key.
SELECT unique_key, id::text AS id FROM :"schema".jobs WHERE unique_key = ANY($1::text[])
