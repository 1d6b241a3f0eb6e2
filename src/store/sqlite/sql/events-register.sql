-- Registers or renews a subscriber. Parameters: id, expires_at.
INSERT INTO ferry_event_subscribers (id, expires_at) VALUES (?, ?)
  ON CONFLICT (id) DO UPDATE SET expires_at = excluded.expires_at
