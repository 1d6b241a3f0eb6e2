-- Events after a cursor, oldest first, with the log's coverage and head read in the same
-- snapshot (a trim between two statements could otherwise hide a gap).
-- Params: $1 seq, $2 limit. Returns: at least one row; seq NULL when no event follows.
-- Uses: the primary key.
SELECT l.covered_from::text AS covered_from,
  (SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM :"schema".event_seq)::text AS head,
  e.seq::text AS seq, e.at, e.type, e.job_id::text AS job_id, e.queue, e.name, e.data
FROM :"schema".event_log l
LEFT JOIN LATERAL (
  SELECT * FROM :"schema".events WHERE seq > $1 ORDER BY seq LIMIT $2
) e ON true
WHERE l.id = 1
ORDER BY e.seq
