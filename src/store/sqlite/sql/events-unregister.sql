-- Removes a subscriber, and those whose registration ran out. Parameters: id, now.
DELETE FROM ferry_event_subscribers WHERE id = ? OR expires_at <= ?
