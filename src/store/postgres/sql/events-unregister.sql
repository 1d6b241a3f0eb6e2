-- Removes a subscriber, and those whose registration ran out. Params: $1 id, $2 now.
DELETE FROM :"schema".event_subscribers WHERE id = $1 OR expires_at <= $2
