-- Registers or renews a subscriber. With nobody else registered, nothing was appended since the
-- last one left though jobs may have moved: the sequence skips one, and the log covers only what
-- follows it, so a cursor from before reads as a gap.
-- Params: $1 id, $2 expires_at, $3 now. Returns: head, the cursor the subscriber starts at.
WITH alone AS (
  SELECT NOT EXISTS (
    SELECT 1 FROM :"schema".event_subscribers WHERE expires_at > $3 AND id <> $1
  ) AS yes
), skipped AS (
  UPDATE :"schema".event_log SET covered_from = greatest(covered_from, nextval(':"schema".event_seq'))
  WHERE id = 1 AND (SELECT yes FROM alone)
  RETURNING covered_from
), registered AS (
  INSERT INTO :"schema".event_subscribers (id, expires_at) VALUES ($1, $2)
  ON CONFLICT (id) DO UPDATE SET expires_at = excluded.expires_at
)
SELECT coalesce(
  (SELECT covered_from FROM skipped),
  (SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM :"schema".event_seq)
)::text AS head
