-- Delivery (Store.waitForJobs): a worker that waits registers itself in `waiters`, and an enqueue
-- that finds it there claims jobs for it inside the enqueue's own transaction (the same claim()
-- as the worker's, so the same order) and sends the leased rows with the wake-up
-- (../functions/deliver.sql). The worker
-- starts them without a claim of its own: one round trip and one WAL flush fewer between an
-- enqueue and its handler.
--
-- Liveness, without timeouts: the listening connection of each store holds a session-level
-- advisory lock on a random key (lock_key) for as long as it lives. An enqueue that can take that
-- key's lock in shared mode (pg_try_advisory_xact_lock_shared succeeds) knows the connection is
-- gone, the waiter with it (a crashed or closed process, a terminated backend): it deletes the
-- row and hands it nothing.

-- One row per waiting worker. UNLOGGED: no WAL for a registration, and a crash empties the table,
-- which is right, since every waiter of the crashed server is gone with its connection.
CREATE UNLOGGED TABLE :"schema".waiters (
  id            text    PRIMARY KEY,
  queues        text[]  NOT NULL, -- in the worker's order: the claim's strict queue order
  lim           integer NOT NULL,
  lease_ms      bigint  NOT NULL,
  worker_id     text    NOT NULL,
  channel       text    NOT NULL, -- the store's own channel, 'ferry:<schema>:<8 hex>'
  lock_key      bigint  NOT NULL, -- held by the store's listening connection while it lives
  registered_at bigint  NOT NULL
);
