-- schedules with a change, the last statement of its transaction (after schedules-lock.sql, whose
-- locks it holds): writes what the call changed, moves the store's schedules version (the control
-- table's row 'schedules', which control() reads), and wakes every waiting worker in every process
-- ('*', at commit, as a stop request does), so that each worker's scheduler reloads at once. The
-- store runs it only when something changed: a call that changes nothing moves no version and wakes
-- nobody.
-- Params: $1 ids[] of the schedules to delete; then the rows to write, one array per column in the
--         order of SCHEDULE_COLUMNS (store/kernel/schedules.ts): $2 id, $3 cron, $4 time_zone,
--         $5 job, $6 missed, $7 overlap, $8 paused_at, $9 last_slot, $10 last_job_id, $11 version,
--         $12 created_at, $13 updated_at.
-- Returns: one row: version (the store's schedules version now).
-- Uses: the schedules table's primary key (and ON CONFLICT); the control table's.
WITH removed AS (
  DELETE FROM :"schema".schedules AS s WHERE s.id = ANY ($1::text[])
),
written AS (
  INSERT INTO :"schema".schedules AS s (id, cron, time_zone, job, missed, overlap, paused_at, last_slot,
                                        last_job_id, version, created_at, updated_at)
  SELECT * FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::bigint[],
                       $9::bigint[], $10::bigint[], $11::bigint[], $12::bigint[], $13::bigint[])
  ON CONFLICT (id) DO UPDATE
  SET cron = excluded.cron, time_zone = excluded.time_zone, job = excluded.job, missed = excluded.missed,
      overlap = excluded.overlap, paused_at = excluded.paused_at, last_slot = excluded.last_slot,
      last_job_id = excluded.last_job_id, version = excluded.version, updated_at = excluded.updated_at
),
bumped AS (
  INSERT INTO :"schema".control AS c (key, at) VALUES ('schedules', 1)
  ON CONFLICT (key) DO UPDATE SET at = c.at + 1
  RETURNING c.at
),
woken AS MATERIALIZED (SELECT bumped.at, pg_notify('ferry:' || :'schema', '*') FROM bumped)
SELECT woken.at::text AS version FROM woken
