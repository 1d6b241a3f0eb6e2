-- Requests from operators to every worker on the store, e.g. `ferry stop-workers`. One row per
-- kind of request; `at` is when it was last made (epoch ms).
CREATE TABLE ferry_control (
  key TEXT PRIMARY KEY,
  at  INTEGER NOT NULL
) STRICT;
