-- Deletes the events past retention (older than a time, or beyond a count) and moves the log's
-- coverage past them. Params: $1 at bound (epoch ms), $2 the count kept. Returns: nothing.
-- The walk for the age bound starts at the oldest and stops at the first young event.
WITH head AS (
  SELECT CASE WHEN is_called THEN last_value ELSE 0 END AS seq FROM :"schema".event_seq
), bound AS (
  SELECT greatest(
    (SELECT seq FROM head) - $2,
    coalesce((SELECT seq - 1 FROM :"schema".events WHERE at >= $1 ORDER BY seq LIMIT 1), (SELECT seq FROM head))
  ) AS seq
), gone AS (
  DELETE FROM :"schema".events WHERE seq <= (SELECT seq FROM bound)
)
UPDATE :"schema".event_log SET covered_from = greatest(covered_from, (SELECT seq FROM bound)) WHERE id = 1
