-- wake: wakes waiting workers, in every process, once the transaction commits (NOTIFY is
-- transactional), and takes out the registrations of the waiters it wakes: every waiter of a queue
-- named in the message (of every queue, for '*') is woken by it and ends its wait, so an enqueue
-- that came after this commit and handed it jobs would only have them given back. The waiter's own
-- delete, sent when it wakes, leaves that open for a round trip. Rows locked by a concurrent
-- delivery are left to it.
-- The message, on channel 'ferry:<schema>', lists queue names (ready work there) and queue@ms items
-- (a job of that queue is due at ms); '*' wakes everyone (a stop request, or a message too long for
-- NOTIFY's 8000 bytes). Queue names cannot contain ',', '@' or '*' (core/validate.ts), so the
-- message is unambiguous.
-- Measured with 2-4 producers enqueuing 1,500 jobs one at a time (0-4 ms apart) and 3-4 stores
-- waiting, claiming and settling in a loop (a busy queue, where most wake-ups find nothing), 3 runs
-- of 2 setups: jobs given back 187-255 without taking the registrations out, 148-194 with it, and
-- 96-125 once the store also hands a late delivery to the same worker's next wait.
-- Parameters: p_ready (queues with ready work), p_due_queues and p_due_at (a queue and when one of
--             its jobs is due, pairwise); NULL entries are skipped.
-- Returns: nothing.
-- Relies on: the waiters table (small, UNLOGGED), rows locked FOR UPDATE SKIP LOCKED.
-- Settings: enable_seqscan = off (README.md).
CREATE OR REPLACE FUNCTION :"schema".wake(p_ready text[], p_due_queues text[], p_due_at bigint[]) RETURNS void
LANGUAGE plpgsql SET enable_seqscan = off
AS $$
#variable_conflict use_column
DECLARE
  message text;
BEGIN
  SELECT string_agg(item, ',') INTO message
  FROM (
    SELECT DISTINCT q AS item FROM unnest(p_ready) AS q WHERE q IS NOT NULL
    UNION ALL
    SELECT d.q || '@' || min(d.at) FROM unnest(p_due_queues, p_due_at) AS d(q, at) WHERE d.q IS NOT NULL GROUP BY d.q
  ) AS items;
  IF message IS NULL THEN
    RETURN;
  END IF;
  IF length(message) > 7900 THEN
    message := '*';
  END IF;
  IF message = '*' OR cardinality(p_ready) > 0 THEN
    DELETE FROM :"schema".waiters AS w
    WHERE w.id = ANY (ARRAY(
      SELECT x.id FROM :"schema".waiters AS x
      WHERE message = '*' OR x.queues && p_ready
      FOR UPDATE SKIP LOCKED
    ));
  END IF;
  PERFORM pg_notify('ferry:' || :'schema', message);
END
$$;
