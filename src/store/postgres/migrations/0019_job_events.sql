-- Job events across processes (docs/events.md): a log written only while someone subscribes.
-- New tables only: nothing of the jobs table changes.
--
-- The log, seq its cursor. Appends take a transaction-level advisory lock before they draw from
-- the sequence (sql/events-append.sql), so seqs become visible in order and a reader after a
-- cursor never skips one that commits later.
CREATE SEQUENCE :"schema".event_seq;
CREATE TABLE :"schema".events (
  seq bigint PRIMARY KEY DEFAULT nextval(':"schema".event_seq'),
  at bigint NOT NULL,
  type text NOT NULL,
  job_id bigint NOT NULL,
  queue text NOT NULL,
  name text NOT NULL,
  -- attempt, runAt, result, error: what the type carries, as JSON text; NULL for none.
  data text
);

-- The subscribers: while one is registered and not expired, writers append events.
CREATE TABLE :"schema".event_subscribers (
  id text PRIMARY KEY,
  expires_at bigint NOT NULL
);

-- covered_from: the log holds every event after this seq (see sql/events-register.sql and
-- sql/events-trim.sql). A cursor before it is a gap.
CREATE TABLE :"schema".event_log (
  id integer PRIMARY KEY CHECK (id = 1),
  covered_from bigint NOT NULL
);
INSERT INTO :"schema".event_log (id, covered_from) VALUES (1, 0);
