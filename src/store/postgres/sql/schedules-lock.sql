-- schedules with a change, the second statement of its transaction (after schedules-serialize.sql,
-- whose lock it holds): the rows of the schedules the call names, locked until it commits, so that
-- a fire committed meanwhile (it moves last_slot and last_job_id) is not written over; and the
-- server's clock, the changes' instant when the call gives no `now`. The store works out each row
-- after the changes from these (store/kernel/schedules.ts, scheduleRowAfter).
-- Params: $1 ids[]
-- Returns: server_now, and the columns of each schedule named that exists, by id; one row whose
--          columns are NULL but server_now when none does.
-- Uses: the schedules table's primary key.
SELECT :"schema".now_ms()::text AS server_now, s.*
FROM (VALUES (1)) AS one(n)
LEFT JOIN LATERAL (
  SELECT x.* FROM :"schema".schedules AS x WHERE x.id = ANY ($1::text[]) ORDER BY x.id FOR UPDATE
) AS s ON true
