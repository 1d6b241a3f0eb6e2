-- listJobs with ids. Params: $1 id[]. Returns: the rows of those that exist, in no order.
-- Uses: the primary key.
SELECT * FROM :"schema".jobs WHERE id = ANY($1::bigint[])
