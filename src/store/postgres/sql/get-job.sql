-- getJob. Params: $1 id. Returns: the row or nothing. Uses: the primary key.
SELECT * FROM :"schema".jobs WHERE id = $1::bigint
