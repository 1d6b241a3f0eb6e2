-- Plans that do not depend on how large the jobs table was when they were made.
--
-- PL/pgSQL (and a named prepared statement) plans a statement once per connection and keeps the
-- plan (a generic plan, after five calls) until something invalidates it, such as ANALYZE. On a
-- fresh table, which every new deployment starts with, the first plans were made while the table
-- held a few rows, where reading its one page beats any index: `Seq Scan on jobs j Filter: (id =
-- ANY (…))` in claim()'s leased step. Kept while the table grew, every claim read the whole table
-- until autoanalyze came, about 80 s in: a third party's harness saw completions fall from ~510/s
-- to 130-290/s and the claim p99 reach 27 s. Measured here (the EXPLAIN of claim() through
-- auto_explain, after ten claims on a 40-row analysed table, then 200,000 rows inserted): 37.6 ms
-- per claim with that plan; 0.73 ms with the setting below; 0.96 ms with plan_cache_mode =
-- force_custom_plan instead, which plans every statement on every call.
--
-- Every statement of these functions reaches the jobs table by an index: by id, or by the partial
-- index of the state it reads (jobs_ready, jobs_scheduled, jobs_active, and the unique key's). So
-- they run with enable_seqscan off: the planner takes an index wherever one serves, and a
-- sequential scan only where none does (the small waiters table). The plan is then the same on an
-- empty table as on a million jobs (bench postgres-plans prints both). A later migration that
-- makes one of these functions again must set it again: tests/store/postgres-store.test.ts checks
-- that every function here has it.

ALTER FUNCTION :"schema".claim(text[], integer, bigint, text, bigint, boolean) SET enable_seqscan = off;
ALTER FUNCTION :"schema".settle(bigint[], text[], text[], bigint[], text[], text[], bigint) SET enable_seqscan = off;
ALTER FUNCTION :"schema".settle_and_claim(bigint[], text[], text[], bigint[], text[], text[], text[], integer, bigint,
                                          text, bigint) SET enable_seqscan = off;
ALTER FUNCTION :"schema".renew(bigint[], text[], bigint, bigint) SET enable_seqscan = off;
ALTER FUNCTION :"schema".take_delivered(bigint[], text[], bigint, bigint) SET enable_seqscan = off;
ALTER FUNCTION :"schema".recover_expired(bigint, integer, bigint[], text[], bigint[]) SET enable_seqscan = off;
ALTER FUNCTION :"schema".enqueue_batch(text[], text[], text[], integer[], bigint[], bigint[], integer[], integer[],
                                       text[], bigint, boolean) SET enable_seqscan = off;
ALTER FUNCTION :"schema".deliver(text[], integer, bigint) SET enable_seqscan = off;
ALTER FUNCTION :"schema".wake(text[], text[], bigint[]) SET enable_seqscan = off;

-- wait_for_work: sql/wait-for-work.sql before (a named prepared statement, so planned the same
-- way), now a function with the same setting. What a waiting worker needs to know when it starts
-- listening, after its listening connection came back, and at each safety-net check: which of its
-- queues have ready work (it may have missed their notifications), the earliest run time of their
-- scheduled jobs (for the 'due' timer), with the server's clock to translate that time to this
-- host's, and the time of the last stop request. With a waiter id, it also registers the waiter
-- for delivery (0003_delivery.sql) unless it is to wake at once (ready or due work): looked at and
-- registered in one snapshot, after its store's LISTEN, so a job committed after the snapshot is
-- either delivered to it or notified to it. Writes nothing without a waiter id, and with one only
-- to the UNLOGGED waiters table (no WAL flush at commit).
CREATE FUNCTION :"schema".wait_for_work(
  p_queues text[], p_waiter_id text, p_limit integer, p_lease_ms bigint, p_worker_id text, p_channel text,
  p_lock_key bigint, OUT ready text[], OUT next_run_at bigint, OUT server_now bigint, OUT stop_at bigint,
  OUT registered boolean
)
LANGUAGE plpgsql
SET jit = off
SET enable_seqscan = off
AS $$
#variable_conflict use_column
BEGIN
  ready := ARRAY(
    SELECT q.name FROM unnest(p_queues) AS q(name)
    WHERE EXISTS (SELECT 1 FROM :"schema".jobs AS j WHERE j.state = 'ready' AND j.queue = q.name)
  );
  SELECT min(n.run_at) INTO next_run_at
  FROM unnest(p_queues) AS q(name)
  CROSS JOIN LATERAL (
    SELECT j.run_at FROM :"schema".jobs AS j WHERE j.state = 'scheduled' AND j.queue = q.name
    ORDER BY j.run_at LIMIT 1
  ) AS n;
  server_now := :"schema".now_ms();
  SELECT c.at INTO stop_at FROM :"schema".control AS c WHERE c.key = 'stop';
  registered := false;
  IF p_waiter_id IS NOT NULL AND cardinality(ready) = 0 AND (next_run_at IS NULL OR next_run_at > server_now) THEN
    INSERT INTO :"schema".waiters (id, queues, lim, lease_ms, worker_id, channel, lock_key, registered_at)
    VALUES (p_waiter_id, p_queues, p_limit, p_lease_ms, p_worker_id, p_channel, p_lock_key, server_now);
    registered := true;
  END IF;
END
$$;
