-- Whether a subscriber is registered and not expired. Params: $1 now. Returns: one row, present.
SELECT EXISTS (SELECT 1 FROM :"schema".event_subscribers WHERE expires_at > $1) AS present
