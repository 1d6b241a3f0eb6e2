-- enqueue from SQL: one job, for triggers, other languages and psql. Checks what Ferry's client
-- checks (names, ranges, payload size) and raises invalid_parameter_value for bad input; wakes the
-- workers when the caller's transaction commits (no delivery: the caller's transaction may stay open
-- long past the instant a lease would start from).
--   SELECT ferry.enqueue('send-email', '{"to": "a@example.com"}');
--   SELECT ferry.enqueue('report', '{}', queue => 'slow', run_at => now() + interval '1 hour');
--   SELECT ferry.enqueue('sync', '{}', group_key => 'tenant-7', expires_at => now() + interval '5 minutes');
-- Parameters: name, payload (json), queue, priority, run_at (NULL: now, by the server's clock),
--             max_attempts, timeout_ms, unique_key, group_key (the job's group: NewJob.group, named
--             so because GROUP is a reserved word), expires_at (the start deadline; after run_at).
-- Returns: the job's id (the existing job's id when unique_key is already held).
-- A job enqueued here has no meta (jobs.meta, migration 0015): no schedule slot, and the backoff of
-- the worker that runs it.
-- Relies on: enqueue_batch(). Settings: none (a cold path; enqueue_batch has its own).
CREATE OR REPLACE FUNCTION :"schema".enqueue(
  name text, payload json, queue text DEFAULT 'default', priority integer DEFAULT 0,
  run_at timestamptz DEFAULT NULL, max_attempts integer DEFAULT 25, timeout_ms integer DEFAULT NULL,
  unique_key text DEFAULT NULL, group_key text DEFAULT NULL, expires_at timestamptz DEFAULT NULL
) RETURNS bigint
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
DECLARE
  job_id bigint;
BEGIN
  IF name IS NULL OR name !~ '^[A-Za-z0-9._:-]{1,128}$' THEN
    RAISE EXCEPTION 'ferry.enqueue: name must match [A-Za-z0-9._:-]{1,128} (got %)', quote_nullable(name)
      USING ERRCODE = 'invalid_parameter_value';
  END IF;
  IF queue IS NULL OR queue !~ '^[A-Za-z0-9._:-]{1,128}$' THEN
    RAISE EXCEPTION 'ferry.enqueue: queue must match [A-Za-z0-9._:-]{1,128} (got %)', quote_nullable(queue)
      USING ERRCODE = 'invalid_parameter_value';
  END IF;
  IF payload IS NULL OR octet_length(payload::text) > 1048576 THEN
    RAISE EXCEPTION 'ferry.enqueue: payload must be JSON of at most 1 MiB'
      USING ERRCODE = 'invalid_parameter_value';
  END IF;
  IF priority IS NULL OR max_attempts IS NULL OR max_attempts < 1 OR max_attempts > 1000000 THEN
    RAISE EXCEPTION 'ferry.enqueue: priority is required and max_attempts must be from 1 to 1000000'
      USING ERRCODE = 'invalid_parameter_value';
  END IF;
  IF timeout_ms IS NOT NULL AND timeout_ms < 1 THEN
    RAISE EXCEPTION 'ferry.enqueue: timeout_ms must be a positive integer'
      USING ERRCODE = 'invalid_parameter_value';
  END IF;
  IF unique_key IS NOT NULL AND (unique_key = '' OR length(unique_key) > 255) THEN
    RAISE EXCEPTION 'ferry.enqueue: unique_key must have 1 to 255 characters'
      USING ERRCODE = 'invalid_parameter_value';
  END IF;
  IF group_key IS NOT NULL AND (group_key = '' OR length(group_key) > 255) THEN
    RAISE EXCEPTION 'ferry.enqueue: group_key must have 1 to 255 characters'
      USING ERRCODE = 'invalid_parameter_value';
  END IF;
  IF expires_at IS NOT NULL AND expires_at <= coalesce(run_at, now()) THEN
    RAISE EXCEPTION 'ferry.enqueue: expires_at must be after run_at (or now): the job would expire before it may run'
      USING ERRCODE = 'invalid_parameter_value';
  END IF;
  SELECT e.id INTO job_id
  FROM :"schema".enqueue_batch(
    ARRAY[queue], ARRAY[name], ARRAY[payload::text], ARRAY[priority],
    ARRAY[floor(extract(epoch FROM run_at) * 1000)::bigint], ARRAY[0::bigint], ARRAY[max_attempts],
    ARRAY[timeout_ms], ARRAY[unique_key], NULL, NULL, ARRAY[group_key],
    ARRAY[floor(extract(epoch FROM expires_at) * 1000)::bigint], NULL, NULL
  ) AS e;
  RETURN job_id;
END
$$;
