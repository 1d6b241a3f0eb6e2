-- getJob. Params: :id. Returns: the row or nothing.
SELECT * FROM ferry_jobs WHERE id = :id
