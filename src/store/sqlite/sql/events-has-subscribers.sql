-- Whether a subscriber is registered and not expired: what every transition's publisher asks
-- first, so a store nobody watches writes no events. Parameters: now. Returns 1 or nothing.
SELECT 1 FROM ferry_event_subscribers WHERE expires_at > ? LIMIT 1
