-- settle_and_claim: settle, then claim, in one transaction and one round trip; the claim sees the
-- settlements (a retry due now can be claimed by the same call).
-- Parameters: settle's p_id[], p_lease_token[], p_kind[], p_run_at[], p_error[], p_result[], then
--             claim's p_queues, p_limit, p_lease_ms, p_worker_id, p_now, p_token_base, p_names,
--             then settle's p_progress[] and p_logs[] (NULL by default, as a worker before
--             migration 0018 calls it).
-- Returns: the claimed rows in claim order, each with settle's lost and locked; when nothing is
--          claimed, one row whose job columns are all NULL carries them.
-- Relies on: what settle() and claim() rely on.
-- Settings: lock_timeout = '5s' (README.md; claim's statements run under it here too) and
--           enable_seqscan = off, as every hot function; jit = off comes with settle() and claim(),
--           which run every statement that reads a table. No #variable_conflict: every column it
--           names is qualified.
CREATE OR REPLACE FUNCTION :"schema".settle_and_claim(
  p_id bigint[], p_lease_token text[], p_kind text[], p_run_at bigint[], p_error text[], p_result text[],
  p_queues text[], p_limit integer, p_lease_ms bigint, p_worker_id text, p_now bigint, p_token_base text,
  p_names text[] DEFAULT NULL, p_progress text[] DEFAULT NULL, p_logs text[] DEFAULT NULL
) RETURNS TABLE (lost integer[], locked integer[], job :"schema".jobs)
LANGUAGE plpgsql SET lock_timeout = '5s' SET enable_seqscan = off
AS $$
DECLARE
  lost_items integer[];
  locked_items integer[];
BEGIN
  SELECT s.lost, s.locked INTO lost_items, locked_items
  FROM :"schema".settle(p_id, p_lease_token, p_kind, p_run_at, p_error, p_result, p_now, p_progress, p_logs) AS s;
  RETURN QUERY SELECT lost_items, locked_items, c
               FROM :"schema".claim(p_queues, p_limit, p_lease_ms, p_worker_id, p_now, p_token_base, false,
                                    p_names) AS c;
  IF NOT FOUND THEN
    RETURN QUERY SELECT lost_items, locked_items, NULL:::"schema".jobs;
  END IF;
END
$$;
